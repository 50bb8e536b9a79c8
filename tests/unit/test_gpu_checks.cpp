// SPDX-License-Identifier: Apache-2.0
// The argument checks every backend shares (backends/common/checks.hpp) run before a device is
// touched, so they are tested here, on every machine: on a GPU-less CI runner the GPU plugins'
// entries are never reached through the front end, which validates first.
#include <cstdint>
#include <cstring>
#include <string>

#include "backends/common/checks.hpp"
#include "support/support.hpp"

namespace check = porta::detail::backend::check;
using porta::detail::backend::last_error;

namespace {
std::string message() {
  return last_error();
}
}  // namespace

TEST_CASE("backend checks accept valid calls and name what is wrong in the others", "[checks]") {
  float buf[8] = {};
  const void* x = buf;
  const void* y = buf + 4;

  CHECK(check::elementwise(PORTA_F32, 4, x, y, "axpy") == PORTA_OK);
  CHECK(check::elementwise(PORTA_F32, 0, nullptr, nullptr, "fill") == PORTA_OK);  // nothing to touch
  CHECK(check::elementwise(static_cast<porta_dtype>(9), 4, x, y, "axpy") == PORTA_ERR_INVALID);
  CHECK(message() == "axpy: unknown dtype 9");
  CHECK(check::elementwise(PORTA_F64, -1, x, y, "fill") == PORTA_ERR_INVALID);
  CHECK(message() == "fill: negative element count -1");
  CHECK(check::elementwise(PORTA_I32, 3, nullptr, y, "axpy") == PORTA_ERR_INVALID);
  CHECK(message() == "axpy: NULL array");

  // cast in one pass (the GPUs): overlapping arrays of different element sizes would overwrite
  // unread input
  CHECK(check::cast(PORTA_F32, PORTA_F64, 4, buf, buf + 2) == PORTA_OK);
  CHECK(check::cast(PORTA_F32, static_cast<porta_dtype>(9), 4, buf, buf + 2) == PORTA_ERR_INVALID);
  CHECK(message() == "cast: unknown dtype 9");
  CHECK(check::cast_in_one_pass(PORTA_F32, PORTA_F64, 2, buf, buf + 2) == PORTA_OK);
  CHECK(check::cast_in_one_pass(PORTA_F32, PORTA_F64, 4, buf, buf + 2) == PORTA_ERR_INVALID);
  CHECK(message() == "cast: input and output overlap without being the same array");
  CHECK(check::cast_in_one_pass(PORTA_F32, PORTA_F64, 4, buf, buf) == PORTA_ERR_INVALID);
  CHECK(message() == "cast: in place between float32 and float64 (different element sizes)");
  CHECK(check::cast_in_one_pass(PORTA_F32, PORTA_I32, 4, buf, buf) == PORTA_OK);

  CHECK(check::unary(PORTA_UNARY_EXP, PORTA_F32, 4, x, y) == PORTA_OK);
  CHECK(check::unary(static_cast<porta_unary_op>(PORTA_UNARY_COUNT), PORTA_F32, 4, x, y) == PORTA_ERR_INVALID);
  CHECK(message().rfind("unary: unknown unary op", 0) == 0);

  std::int64_t n = 0;
  CHECK(check::binary(PORTA_BINARY_ADD, PORTA_F32, 2, 3, x, x, y, &n) == PORTA_OK);
  CHECK(n == 6);
  CHECK(check::binary(PORTA_BINARY_ADD, PORTA_F32, -2, 3, x, x, y, &n) == PORTA_ERR_INVALID);
  CHECK(message() == "binary: bad shape -2 x 3");
  CHECK(check::binary(PORTA_BINARY_ADD, PORTA_F32, std::int64_t(1) << 40, std::int64_t(1) << 40, x, x, y, &n) ==
        PORTA_ERR_INVALID);  // rows * cols overflows
  CHECK(check::binary(PORTA_BINARY_ADD, PORTA_F32, 2, 3, x, nullptr, y, &n) == PORTA_ERR_INVALID);
  CHECK(check::binary_scalar(static_cast<porta_binary_op>(-1), PORTA_F32, 4, x, y) == PORTA_ERR_INVALID);

  CHECK(check::reduce(PORTA_REDUCE_SUM, PORTA_F64, 2, 5, 3, x, y) == PORTA_OK);
  CHECK(check::reduce(PORTA_REDUCE_SUM, PORTA_F64, 2, 0, 3, nullptr, y) == PORTA_OK);  // empty rows: identities
  CHECK(check::reduce(PORTA_REDUCE_SUM, PORTA_F64, 2, 5, 3, nullptr, y) == PORTA_ERR_INVALID);
  CHECK(check::reduce(static_cast<porta_reduce_op>(99), PORTA_F64, 1, 1, 1, x, y) == PORTA_ERR_INVALID);
  CHECK(message() == "reduce: unknown reduce op 99");
  CHECK(check::dot(PORTA_F32, 4, x, x, y) == PORTA_OK);
  CHECK(check::dot(PORTA_F32, 4, x, x, nullptr) == PORTA_ERR_INVALID);

  // gemm: row-major A m x k, B k x n, C m x n, with transposes
  CHECK(check::gemm(PORTA_F32, 0, 0, 2, 3, 4, x, 4, x, 3, y, 3) == PORTA_OK);
  CHECK(check::gemm(PORTA_F32, 1, 1, 2, 3, 4, x, 2, x, 4, y, 3) == PORTA_OK);
  CHECK(check::gemm(PORTA_F32, 0, 0, 2, 3, 4, x, 3, x, 3, y, 3) == PORTA_ERR_INVALID);
  CHECK(message() == "gemm: leading dimension too small (lda 3 for 4 columns, ldb 3 for 3, ldc 3 for 3)");
  CHECK(check::gemm(PORTA_F32, 0, 0, -1, 3, 4, x, 4, x, 3, y, 3) == PORTA_ERR_INVALID);
  CHECK(check::gemm(PORTA_F32, 0, 0, 0, 3, 4, nullptr, 4, nullptr, 3, nullptr, 3) == PORTA_OK);  // empty C
  CHECK(check::gemm(PORTA_F32, 0, 0, 2, 3, 4, x, 4, nullptr, 3, y, 3) == PORTA_ERR_INVALID);
  CHECK(message() == "gemm: NULL array");
}

TEST_CASE("backend checks read enum arguments through their bytes", "[checks]") {
  // What a C caller can pass: any int in an enum parameter. Built through memcpy, as a C caller's
  // bytes arrive, so that this test itself never loads an out-of-range enum.
  float buf[4] = {};
  for (int v : {-1, static_cast<int>(PORTA_UNARY_COUNT), 1000}) {
    porta_unary_op op;
    std::memcpy(&op, &v, sizeof v);
    CHECK(check::unary(op, PORTA_F32, 4, buf, buf) == PORTA_ERR_INVALID);
    CHECK(message() == "unary: unknown unary op " + std::to_string(v));
  }
  int bad = 77;
  porta_dtype dt;
  std::memcpy(&dt, &bad, sizeof bad);
  CHECK(check::dot(dt, 4, buf, buf, buf) == PORTA_ERR_INVALID);
  CHECK(message() == "dot: unknown dtype 77");
}
