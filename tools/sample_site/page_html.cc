#include "page_html.h"

#include <algorithm>
#include <cstdio>

#include "random.h"
#include "site_text.h"

namespace lethe::sample_site {

namespace {

constexpr int kColumn = 976;                  // the article column (1024 - 2 x 24 margins)
constexpr uint32_t kHtmlStream = 0x47e1u;     // the page's Random for text

std::string PageName(int page) {
  char name[16];
  std::snprintf(name, sizeof(name), "page-%02d", page);
  return name;
}

// An <img> at `width` x its proportional height (natural size when it fits).
std::string Img(const ImageSpec& image, int width, const std::string& attributes = "") {
  width = std::min(width, image.width);
  const int height = image.height * width / image.width;
  return "<img src=\"../" + image.file + "\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(height) + "\" alt=\"\"" + (attributes.empty() ? "" : " " + attributes) + ">";
}

int FloatWidth(const PlannedImage& image) {
  switch (image.role) {
    case ImageRole::kPhoto:
      return image.spec.height > image.spec.width ? 400 : 560;
    case ImageRole::kChart:
    case ImageRole::kScreenshot:
      return 600;
    default:
      return 520;
  }
}

class PageWriter {
 public:
  PageWriter(int page, uint32_t site_seed)
      : page_(page), random_(site_seed, static_cast<uint32_t>(page), kHtmlStream) {}

  std::string Build(const std::vector<PlannedImage>& shared, const std::vector<PlannedImage>& own) {
    const std::string title = "Sample page " + std::to_string(page_) + ": " + Sentence(random_, 4);
    html_ += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
             title + "</title>\n<link rel=\"stylesheet\" href=\"../site.css\">\n" +
             "<link rel=\"stylesheet\" href=\"" + PageName(page_) + ".css\">\n</head>\n<body>\n";
    Header(shared);
    html_ += "<div class=\"article\">\n<h1>" + title + "</h1>\n";
    std::vector<const PlannedImage*> body;
    std::vector<const ImageSpec*> thumbnails;
    const ImageSpec* backdrop = nullptr;
    for (const PlannedImage& image : own) {
      if (image.role == ImageRole::kHero) {
        Hero(image.spec);
      } else if (image.role == ImageRole::kThumbnail) {
        thumbnails.push_back(&image.spec);
      } else if (image.role == ImageRole::kDiagram && backdrop == nullptr) {
        backdrop = &image.spec;  // drawn by page-NN.css as the aside's background
      } else {
        body.push_back(&image);
      }
    }
    for (size_t i = body.size(); i > 1; --i) std::swap(body[i - 1], body[random_.Next() % i]);
    for (size_t i = 0; i < body.size(); ++i) Beside(*body[i], i % 2 == 0);
    if (backdrop != nullptr) Aside();
    if (!thumbnails.empty()) Thumbnails(thumbnails);
    html_ += "</div>\n";
    Footer(shared);
    html_ += "</body>\n</html>\n";
    return std::move(html_);
  }

 private:
  void Paragraph(int chars) { html_ += "<p>" + sample_site::Paragraph(random_, chars) + "</p>\n"; }

  void Header(const std::vector<PlannedImage>& shared) {
    html_ += "<div class=\"header\">\n";
    for (const PlannedImage& image : shared) {
      if (image.role == ImageRole::kLogo) html_ += Img(image.spec, image.spec.width, "class=\"logo\"");
    }
    html_ += "<div class=\"icons\">";
    for (const PlannedImage& image : shared) {
      if (image.role == ImageRole::kIcon || image.role == ImageRole::kSpinner) {
        html_ += Img(image.spec, image.spec.width);
      }
    }
    html_ += "</div>\n</div>\n";
  }

  void Hero(const ImageSpec& hero) {
    html_ += "<div class=\"hero\">" + Img(hero, kColumn) + "\n<p class=\"caption\">" +
             Sentence(random_, random_.Range(6, 14)) + "</p>\n</div>\n";
    Paragraph(390);
  }

  void Beside(const PlannedImage& image, bool on_left) {
    html_ += "<div class=\"section\">\n";
    html_ += Img(image.spec, FloatWidth(image), on_left ? "class=\"left\"" : "class=\"right\"");
    html_ += "\n<h2>" + Sentence(random_, random_.Range(3, 6)) + "</h2>\n";
    const int paragraphs = 1 + image.spec.height * FloatWidth(image) / image.spec.width / 110;
    for (int i = 0; i < paragraphs; ++i) Paragraph(random_.Range(160, 260));
    html_ += "</div>\n";
    Paragraph(390);
  }

  void Aside() {
    html_ += "<div class=\"aside\">\n<h3>" + Sentence(random_, 3) + "</h3>\n<ol>\n";
    for (int i = 0; i < 4; ++i) html_ += "<li>" + Sentence(random_, random_.Range(4, 9)) + "</li>\n";
    html_ += "</ol>\n<p>" + sample_site::Paragraph(random_, 160) + "</p>\n</div>\n";
  }

  void Thumbnails(const std::vector<const ImageSpec*>& thumbnails) {
    html_ += "<h2>Related</h2>\n<table class=\"thumbs\">\n<tr>";
    for (const ImageSpec* thumbnail : thumbnails) {
      html_ += "<td>" + Img(*thumbnail, thumbnail->width) + "<br>" +
               Sentence(random_, random_.Range(2, 4)) + "</td>";
    }
    html_ += "</tr>\n</table>\n<ul class=\"links\">\n";
    for (int i = 0; i < 3; ++i) {
      html_ += "<li><a href=\"" + PageName((page_ + i) % 29 + 1) + ".html\">" + Sentence(random_, random_.Range(3, 6)) + "</a></li>\n";
    }
    html_ += "</ul>\n";
  }

  void Footer(const std::vector<PlannedImage>& shared) {
    html_ += "<div class=\"footer\">\n<p>" + Sentence(random_, 8) + "</p>\n<div class=\"icons\">";
    for (const PlannedImage& image : shared) {
      if (image.role == ImageRole::kIcon) html_ += Img(image.spec, image.spec.width);
    }
    html_ += "</div>\n</div>\n";
  }

  int page_;
  Random random_;
  std::string html_;
};

}  // namespace

std::string SiteStylesheet(const std::vector<PlannedImage>& shared) {
  std::string icon = "images/icon-home.png";
  for (const PlannedImage& image : shared) {
    if (image.role == ImageRole::kIcon) {
      icon = image.spec.file;
      break;
    }
  }
  return "/* The sample site's shared stylesheet. */\n"
         "body { margin: 0; background-color: #ffffff; color: #303030;\n"
         "       font-family: \"DejaVu Sans\", Verdana, sans-serif; font-size: 16px; }\n"
         ".header { background-color: #f0f0f6; background-image: url(" + icon + ");\n"
         "          background-repeat: repeat-x; background-position: left bottom;\n"
         "          padding: 8px 24px 40px 24px; border-bottom: 2px solid #c0c0d0; }\n"
         ".header .logo { float: left; }\n"
         ".header .icons { text-align: right; }\n"
         ".header .icons img { margin-left: 12px; }\n"
         ".article { margin: 0 24px; }\n"
         "h1 { font-size: 28px; color: #202040; clear: both; }\n"
         "h2 { font-size: 20px; color: #202040; }\n"
         "h3 { font-size: 17px; font-style: italic; }\n"
         ".caption { font-size: 13px; color: #606060; margin-top: 4px; }\n"
         ".section { overflow: hidden; margin-bottom: 16px; }\n"
         "img.left { float: left; margin: 0 16px 8px 0; }\n"
         "img.right { float: right; margin: 0 0 8px 16px; }\n"
         ".aside { border: 1px solid #c0c0d0; padding: 12px 12px 12px 24px; margin: 16px 0; }\n"
         "table.thumbs td { font-size: 13px; color: #404040; vertical-align: top; padding: 0 16px 0 0; }\n"
         "ul.links li { margin: 4px 0; }\n"
         ".footer { border-top: 1px solid #c0c0d0; margin-top: 24px; padding: 8px 24px;\n"
         "          font-size: 13px; color: #808080; }\n"
         ".footer .icons img { margin-right: 12px; }\n";
}

std::string PageStylesheet(int page, const std::vector<PlannedImage>& own) {
  static const char* const kAccents[] = {"#204080", "#806020", "#208040", "#802040", "#404040"};
  const char* accent = kAccents[page % 5];
  std::string css = "/* " + PageName(page) + "'s own stylesheet. */\n";
  css += "h1, h2 { color: " + std::string(accent) + "; }\n";
  css += ".aside { border-color: " + std::string(accent) + "; }\n";
  for (const PlannedImage& image : own) {
    if (image.role != ImageRole::kDiagram) continue;
    css += ".aside { background-image: url(../" + image.spec.file +
           "); background-repeat: no-repeat; background-position: right top;\n"
           "         padding-right: " + std::to_string(image.spec.width + 16) +
           "px; min-height: " + std::to_string(image.spec.height) + "px; }\n";
    break;
  }
  return css;
}

std::string PageHtml(int page, const std::vector<PlannedImage>& shared,
                     const std::vector<PlannedImage>& own, uint32_t site_seed) {
  return PageWriter(page, site_seed).Build(shared, own);
}

}  // namespace lethe::sample_site
