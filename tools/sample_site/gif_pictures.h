// gif_pictures.h — the sample site's GIF files: animations (a ball moving over a banded
// background, with the disposal methods, local palettes and interlacing real GIFs use) and still
// GIFs of flat pictures. Built on WriteGif (image_writers.h); any thread.
#ifndef LETHE_TOOLS_SAMPLE_SITE_GIF_PICTURES_H_
#define LETHE_TOOLS_SAMPLE_SITE_GIF_PICTURES_H_

#include <string>

#include "pictures.h"
#include "random.h"

namespace lethe::sample_site {

// An animation of `frame_count` frames (>= 2) that loops forever: a full background frame, then a
// ball in its own small rectangle per frame. `style` 0, 1, 2 picks the disposal method (restore
// previous, restore background, keep); style 1 gives some frames a local palette, style 2
// interlaces some. False with *error naming the file when it cannot be written.
bool WriteAnimation(const std::string& path, int width, int height, int frame_count, int style,
                    Random& random, std::string* error);

// A still GIF of `picture`, which must have at most 256 colours (flat pictures have a few dozen);
// colours past the 256th map to entry 0.
bool WriteStillGif(const std::string& path, const Picture& picture, std::string* error);

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_GIF_PICTURES_H_
