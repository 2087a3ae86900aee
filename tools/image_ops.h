// Geometry and colour of host images (tools/image_io.h): the resizing,
// cropping and YCbCr conversion that classifier and super-resolution
// preprocessing use.
#pragma once
#include "tools/image_io.h"

namespace kgen::tools {

// Bilinear with pixel centres at +0.5; shrinking widens the filter to the
// scale factor (antialiased, as PIL and torchvision do) so that no input
// pixel is skipped.
Image resize_bilinear(const Image& in, int w, int h);
// The shorter side becomes `side`, the longer one keeps the aspect ratio.
Image resize_shorter_side(const Image& in, int side);
// The centre w×h window (the image must be at least that large).
Image center_crop(const Image& in, int w, int h);

// Full-range BT.601 (JPEG, PIL's "YCbCr"): 3 channels in, 3 channels out.
Image rgb_to_ycbcr(const Image& rgb);
Image ycbcr_to_rgb(const Image& ycc);

}  // namespace kgen::tools
