// The geometry of CUDA's tiled binary kernel (binary_tiles in kernels/elementwise_cuda.cuh; its
// TileLayout and tile_of_block in kernels/elementwise_access.cuh), checked on the host for each
// element size: every thread's vectors cover the tile exactly once in both passes, the shared
// tile's permutation is one-to-one, neither pass has shared-memory bank conflicts, each warp's
// global accesses are whole 128-byte lines, and the blocks cover the tiles exactly once, in
// groups of kTileGroup tile rows.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "kernels/elementwise_access.cuh"

using namespace culua::detail::kernels;

namespace {

constexpr int kWarp = 32;
constexpr int kBanks = 32;

// Bank conflicts of one shared-memory access by `lanes` (byte addresses, each `width` bytes): the
// hardware serves 128 bytes per phase (8 lanes of 16-byte, 16 of 8-byte, 32 of 4-byte or smaller
// accesses); within a phase, two lanes conflict when they touch one bank in different 4-byte
// words. Returns the largest number of different words of one bank in a phase.
int conflicts(const std::vector<size_t>& lanes, size_t width) {
  const size_t per_phase = width >= 4 ? 128 / width : kWarp;
  int worst = 1;
  for (size_t first = 0; first < lanes.size(); first += per_phase) {
    std::map<size_t, std::set<size_t>> words;  // bank -> words
    for (size_t l = first; l < first + per_phase && l < lanes.size(); ++l) {
      for (size_t b = 0; b < (width + 3) / 4; ++b) {
        const size_t word = lanes[l] / 4 + b;
        words[word % kBanks].insert(word);
      }
    }
    for (const auto& [bank, set] : words) worst = std::max(worst, static_cast<int>(set.size()));
  }
  return worst;
}

template <size_t E>
void check_layout() {
  using L = TileLayout<E>;
  INFO("element size " << E);
  REQUIRE(L::V * E == 16);
  REQUIRE(L::R * E == 256);
  REQUIRE(L::kBytes == 16384);

  // The shared tile's index: one-to-one onto [0, R x C), and each vector of V rows of a column is
  // 16 contiguous, 16-byte aligned bytes.
  std::vector<int> seen(static_cast<size_t>(L::R * L::C), 0);
  for (int c = 0; c < L::C; ++c) {
    for (int r = 0; r < L::R; ++r) {
      const int at = L::at(r, c);
      REQUIRE(at >= 0);
      REQUIRE(at < L::R * L::C);
      ++seen[static_cast<size_t>(at)];
      REQUIRE(at == L::vector_at(r, c) * L::V + r % L::V);
      if (r % L::V != 0) REQUIRE(at == L::at(r - r % L::V, c) + r % L::V);
      // The kernel reads the V columns of a vector from at(r, c) with a stride of R.
      if (c % L::V != 0) REQUIRE(at == L::at(r, c - c % L::V) + c % L::V * L::R);
    }
  }
  for (int n : seen) REQUIRE(n == 1);

  // Staging pass: the vectors (stage_row, stage_col) of all threads and passes cover the tile's
  // R / V x C vectors once; a warp reads whole 256-byte columns; a quarter-warp's 16-byte shared
  // stores are free of bank conflicts.
  std::set<std::pair<int, int>> staged;
  for (int i = 0; i < 4; ++i) {
    for (unsigned w = 0; w < L::kThreads / kWarp; ++w) {
      std::vector<size_t> addr;
      std::map<int, std::set<int>> rows_of_column;
      for (unsigned l = 0; l < kWarp; ++l) {
        const unsigned t = w * kWarp + l;
        const int r = L::stage_row(t), c = L::stage_col(t, i);
        REQUIRE(r % L::V == 0);
        REQUIRE(r < L::R);
        REQUIRE(c < L::C);
        REQUIRE(staged.insert({r, c}).second);
        rows_of_column[c].insert(r);
        addr.push_back(static_cast<size_t>(L::at(r, c)) * E);
      }
      for (const auto& [c, rows] : rows_of_column)
        REQUIRE(static_cast<int>(rows.size()) == L::R / L::V);
      REQUIRE(conflicts(addr, 16) == 1);
    }
  }
  REQUIRE(static_cast<int>(staged.size()) == L::R / L::V * L::C);

  // Output pass: the vectors (out_row, out_col) cover the tile once; a warp's vectors are runs of
  // whole 128-byte lines along rows; its shared loads (element j of each vector, down the
  // staged columns) are free of bank conflicts.
  std::set<std::pair<int, int>> out;
  for (int i = 0; i < 4; ++i) {
    for (unsigned w = 0; w < L::kThreads / kWarp; ++w) {
      std::map<int, std::set<int>> columns_of_row;
      for (unsigned l = 0; l < kWarp; ++l) {
        const unsigned t = w * kWarp + l;
        const int r = L::out_row(t, i), c = L::out_col(t);
        REQUIRE(c % L::V == 0);
        REQUIRE(r < L::R);
        REQUIRE(c < L::C);
        REQUIRE(out.insert({r, c}).second);
        columns_of_row[r].insert(c);
      }
      for (const auto& [r, columns] : columns_of_row) {
        const int bytes = static_cast<int>(columns.size()) * 16;
        REQUIRE(bytes % 128 == 0);
        REQUIRE(*columns.begin() * static_cast<int>(E) % 128 == 0);
        REQUIRE((*columns.rbegin() - *columns.begin()) / L::V + 1 ==
                static_cast<int>(columns.size()));
      }
      for (int j = 0; j < L::V; ++j) {
        std::vector<size_t> addr;
        for (unsigned l = 0; l < kWarp; ++l) {
          const unsigned t = w * kWarp + l;
          addr.push_back(static_cast<size_t>(L::at(L::out_row(t, i), L::out_col(t) + j)) * E);
        }
        INFO("pass " << i << ", warp " << w << ", element " << j);
        REQUIRE(conflicts(addr, E) == 1);
      }
    }
  }
  REQUIRE(static_cast<int>(out.size()) == L::R * L::C / L::V);
}

}  // namespace

TEST_CASE("tile layout: both passes cover the tile, no bank conflicts, whole lines") {
  check_layout<2>();
  check_layout<4>();
  check_layout<8>();
}

TEST_CASE("tile layout: the blocks cover the tiles once, in groups of tile rows") {
  for (uint32_t rows : {1u, 2u, 7u, 8u, 9u, 16u, 17u, 33u}) {
    for (uint32_t cols : {1u, 3u, 8u, 13u}) {
      INFO(rows << " x " << cols << " tiles");
      std::set<std::pair<uint32_t, uint32_t>> seen;
      for (uint32_t n = 0; n < rows * cols; ++n) {
        uint32_t tr = 0, tc = 0;
        tile_of_block(n, rows, cols, &tr, &tc);
        REQUIRE(tr < rows);
        REQUIRE(tc < cols);
        REQUIRE(seen.insert({tr, tc}).second);
        // Block n belongs to the group of tile rows n / (kTileGroup * cols).
        REQUIRE(tr / kTileGroup == n / (kTileGroup * cols));
      }
      REQUIRE(seen.size() == static_cast<size_t>(rows) * cols);
    }
  }
}
