// engine/png_writer.h — a premultiplied BGRA8 Surface to an 8-bit RGBA PNG file (Screenshot).
// Any thread; pure function of its arguments. Writes whole or not at all (WriteFileAtomically).
#ifndef LETHE_ENGINE_PNG_WRITER_H_
#define LETHE_ENGINE_PNG_WRITER_H_

#include <string>

#include "lethe/surface.h"

namespace lethe::internal {

// "" on success, else why ("cannot write /x/y.png: No such file or directory").
std::string WritePng(const Surface& surface, const std::string& path);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_PNG_WRITER_H_
