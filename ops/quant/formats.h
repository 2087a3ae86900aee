// GGML's block-quantized weight formats, byte for byte (so GGUF tensors load
// without conversion), and their host-side reference code.
//
// A tensor of a format is a sequence of blocks; a block packs `block_elems`
// consecutive weights of one row into `block_bytes` bytes (little endian,
// f16 scales as IEEE half bits, no padding, blocks only 2-byte aligned):
//
//   Q4_0  32 el, 18 B: d:f16, qs[16]                 w = (nibble - 8)·d
//   Q4_1  32 el, 20 B: d:f16, m:f16, qs[16]          w = nibble·d + m
//   Q5_0  32 el, 22 B: d:f16, qh[4], qs[16]          w = (nibble | bit<<4) - 16)·d
//   Q5_1  32 el, 24 B: d:f16, m:f16, qh[4], qs[16]   w = (nibble | bit<<4)·d + m
//   Q8_0  32 el, 34 B: d:f16, qs[32] (int8)          w = q·d
//     (4/5-bit: byte j's low nibble is element j, its high nibble element
//      j+16; bit j of the little-endian u32 qh is element j's fifth bit)
//   Q2_K 256 el,  84 B: scales[16], qs[64], d:f16, dmin:f16
//   Q3_K 256 el, 110 B: hmask[32], qs[64], scales[12], d:f16
//   Q4_K 256 el, 144 B: d:f16, dmin:f16, scales[12], qs[128]
//   Q5_K 256 el, 176 B: d:f16, dmin:f16, scales[12], qh[32], qs[128]
//   Q6_K 256 el, 210 B: ql[128], qh[64], scales[16] (int8), d:f16
//     (16 or 8 sub-blocks per super-block, each with its own scale (and
//      min); Q3_K/Q4_K/Q5_K pack 6-bit scales into 12 bytes; see
//      ops/quant/formats.cpp for where each element's bits live)
//
// The enum values are GGML's type ids (the GGUF tensor type field).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace kgen::ops::quant {

enum class QFormat : int {
  Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14,
};

struct FormatInfo {
  QFormat format;
  const char* name;  // "q4_0", "q4_K" (GGML's spelling)
  int block_elems;   // 32 or 256 (QK_K)
  int block_bytes;
};

const std::vector<FormatInfo>& all_formats();
const FormatInfo& info(QFormat f);                 // throws std::invalid_argument for an unknown id
std::optional<QFormat> format_from_id(int64_t id);
std::optional<QFormat> parse_format(std::string_view name);  // "q8_0", "Q4_K"

// Bytes of `rows` rows of `k` elements (k a multiple of block_elems).
size_t packed_bytes(QFormat f, int64_t rows, int64_t k);
// The same rounded up to whole u32 words: the size of a device buffer holding
// the tensor (GPU kernels read the bytes as u32 words).
size_t padded_bytes(QFormat f, int64_t rows, int64_t k);

// IEEE binary16 <-> binary32 (round to nearest even, subnormals, Inf/NaN).
float half_to_float(uint16_t h);
uint16_t float_to_half(float x);

// Reference dequantization of `nblocks` consecutive blocks into
// nblocks·block_elems floats, with GGML's arithmetic (order of operations
// included, so results agree bit for bit with dequantize_row_*).
void dequantize_ref(QFormat f, const uint8_t* src, float* dst, int64_t nblocks);

// GGML's reference quantizers (quantize_row_q8_0_ref / _q4_0_ref); n is a
// multiple of 32.
void quantize_q8_0_ref(const float* x, uint8_t* dst, int64_t n);
void quantize_q4_0_ref(const float* x, uint8_t* dst, int64_t n);
// The other formats' quantize_row_*_ref (ops/quant/quantize_ref.cpp): what
// llama.cpp's quantize tool writes without an importance matrix, byte for
// byte. n is a multiple of the block (32, or 256 for the K-quants); x finite.
void quantize_q4_1_ref(const float* x, uint8_t* dst, int64_t n);
void quantize_q5_0_ref(const float* x, uint8_t* dst, int64_t n);
void quantize_q5_1_ref(const float* x, uint8_t* dst, int64_t n);
void quantize_q2_K_ref(const float* x, uint8_t* dst, int64_t n);
void quantize_q3_K_ref(const float* x, uint8_t* dst, int64_t n);
void quantize_q4_K_ref(const float* x, uint8_t* dst, int64_t n);
void quantize_q5_K_ref(const float* x, uint8_t* dst, int64_t n);
void quantize_q6_K_ref(const float* x, uint8_t* dst, int64_t n);
// Any format's reference quantizer; throws std::invalid_argument when n is
// not a whole number of blocks.
void quantize_ref(QFormat f, const float* x, uint8_t* dst, int64_t n);

// The activation quantization of qmatmul's int8 path (quantize_x8_kernel),
// on the host: each block of 32 x to d = amax/127 and q = round-to-even(x·(1/d))
// (0 when d = 0); writes x̂ = d·q, the values the int8 GEMV multiplies.
// block 256: the super-block form (quantize_x8k_kernel, Q2_K to Q6_K).
void quantize_x8_ref(const float* x, float* xhat, int64_t n, int block = 32);

// Rows interleaved by 16 (qmatmul attr layout=16; Q4_0, Q8_0, Q4_K, Q6_K): kgen's
// CPU layout for the int8 GEMV, after llama.cpp's Q4_0_8x8 repack, made at
// load time from GGML bytes (the same bytes, reordered). Rows are padded to a
// multiple of 16 with zero blocks; each group of 16 rows is a run of tiles
// in whole cache lines: a pair of blocks for Q4_0 / Q8_0 / Q6_K (an odd
// count: the last tile's second block is zeros), one super-block for Q4_K. Byte 4r + t of a
// 64-byte code chunk is row r's code byte 4c + t of the chunk's run, so one
// chunk is 16 rows (lanes) of 4 codes: one dot4 against 4 broadcast
// activation bytes advances 16 rows at once, with no horizontal sums.
//   Q4_0, 576 bytes (9 lines):
//   [256j, 256j + 256)  block j of the pair, 4 chunks c: row r's qs[4c + t]
//                       (elements 4c + t and 16 + 4c + t in its nibbles)
//   [512 + 32j + 2r]    the f16 scale d of row r's block j
//   Q8_0, 1088 bytes (17 lines):
//   [512j, 512j + 512)  block j, 8 chunks: row r's qs[4c + t] + 128 (unsigned)
//   [1024 + 32j + 2r]   d of row r's block j
//   Q4_K, 2304 bytes (36 lines):
//   [512p, 512p + 512)  qs[32p .. 32p + 32) of each row (p: sub-block pair;
//                       low nibbles sub-block 2p, high ones 2p + 1), 8 chunks
//   [2048 + 64i + 4r]   row r's scale bytes 4i .. 4i + 3 (i < 3: the packed
//                       6-bit scales and mins as 3 lines of words)
//   [2240 + 2r], [2272 + 2r]  d and dmin of row r
//   Q6_K, a pair of super-blocks, 6720 bytes (105 lines):
//   [2048j, +2048)      super-block j's ql[128] of each row, 16 chunks
//   [4096 + 1024j, ..)  its qh[64], 8 chunks
//   [6144 + 256j + 64i + 4r]  row r's scales 4i .. 4i + 3 (4 lines of words)
//   [6656 + 32j + 2r]   d of row r's super-block j
constexpr int64_t kR16Rows = 16;
bool has_r16(QFormat f);                 // Q4_0, Q8_0, Q4_K, Q6_K
int64_t r16_tile_bytes(QFormat f);       // 576, 1088, 2304, 6720
int64_t r16_blocks_per_tile(QFormat f);  // 2, 2, 1, 2
size_t r16_bytes(QFormat f, int64_t rows, int64_t k);
// Where byte q of block j (of its tile) of row r (of its group) goes in the tile.
size_t r16_byte_offset(QFormat f, size_t q, size_t j, size_t r);
// GGML bytes (rows x k) to the interleaved layout (dst: r16_bytes) and back.
void repack_r16(QFormat f, const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k);
void unpack_r16(QFormat f, const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k);

// Valid random blocks: random bytes for the quants and sub-block scales,
// finite f16 super-block scales of a sensible magnitude (weights of order 1).
void random_blocks(QFormat f, uint8_t* dst, int64_t nblocks, uint64_t seed);

}  // namespace kgen::ops::quant
