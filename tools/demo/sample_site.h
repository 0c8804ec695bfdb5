// tools/demo/sample_site.h — the demo's sample site: procedural pictures encoded as PNG, JPEG and
// (animated) GIF with libpng, libjpeg-turbo and giflib. The build runs lethe-demo-site once to
// write them; lethe-demo reads them like any directory of images.
#ifndef LETHE_TOOLS_DEMO_SAMPLE_SITE_H_
#define LETHE_TOOLS_DEMO_SAMPLE_SITE_H_

#include <string>

namespace lethe::demo {

// Writes the sample images into `directory` (created if missing). Returns "" or an error.
std::string GenerateSampleSite(const std::string& directory);

}  // namespace lethe::demo

#endif  // LETHE_TOOLS_DEMO_SAMPLE_SITE_H_
