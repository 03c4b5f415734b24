// Reading the PNG a headless browser writes (8-bit RGB or RGBA, not
// interlaced) into pixels, with zlib: enough to check a screenshot.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace attune::test {

struct Rgb {
  int r = 0, g = 0, b = 0;
};

class PngImage {
 public:
  explicit PngImage(const std::string& bytes) { decode(bytes); }

  int width() const { return width_; }
  int height() const { return height_; }
  Rgb at(int x, int y) const {
    const std::size_t i = (static_cast<std::size_t>(y) * width_ + x) * channels_;
    return {pixels_[i], pixels_[i + 1], pixels_[i + 2]};
  }

 private:
  static std::uint32_t be32(const std::string& s, std::size_t at) {
    return (std::uint32_t(std::uint8_t(s[at])) << 24) | (std::uint32_t(std::uint8_t(s[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(s[at + 2])) << 8) | std::uint32_t(std::uint8_t(s[at + 3]));
  }

  static int paeth(int a, int b, int c) {
    const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
  }

  void decode(const std::string& s) {
    if (s.size() < 8 || s.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) throw std::runtime_error("not a PNG");
    std::string idat;
    for (std::size_t at = 8; at + 8 <= s.size();) {
      const std::uint32_t len = be32(s, at);
      const std::string type = s.substr(at + 4, 4);
      if (type == "IHDR") {
        width_ = static_cast<int>(be32(s, at + 8));
        height_ = static_cast<int>(be32(s, at + 12));
        const int depth = std::uint8_t(s[at + 16]), colour = std::uint8_t(s[at + 17]), interlace = std::uint8_t(s[at + 20]);
        if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) throw std::runtime_error("unsupported PNG kind");
        channels_ = colour == 6 ? 4 : 3;
      } else if (type == "IDAT") {
        idat += s.substr(at + 8, len);
      }
      at += 12 + len;
    }
    const std::size_t stride = static_cast<std::size_t>(width_) * channels_;
    std::vector<unsigned char> raw((stride + 1) * height_);
    uLongf size = raw.size();
    if (uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK || size != raw.size())
      throw std::runtime_error("bad PNG data");
    pixels_.assign(stride * height_, 0);
    for (int y = 0; y < height_; ++y) {
      const unsigned char filter = raw[y * (stride + 1)];
      const unsigned char* in = &raw[y * (stride + 1) + 1];
      unsigned char* out = &pixels_[y * stride];
      const unsigned char* up = y > 0 ? &pixels_[(y - 1) * stride] : nullptr;
      for (std::size_t i = 0; i < stride; ++i) {
        const int a = i >= std::size_t(channels_) ? out[i - channels_] : 0;
        const int b = up ? up[i] : 0;
        const int c = up && i >= std::size_t(channels_) ? up[i - channels_] : 0;
        int v = in[i];
        if (filter == 1) v += a;
        else if (filter == 2) v += b;
        else if (filter == 3) v += (a + b) / 2;
        else if (filter == 4) v += paeth(a, b, c);
        out[i] = static_cast<unsigned char>(v & 0xff);
      }
    }
  }

  int width_ = 0, height_ = 0, channels_ = 3;
  std::vector<unsigned char> pixels_;
};

}  // namespace attune::test
