// SPDX-License-Identifier: Apache-2.0
// The map_program entry of the backend table (fused expressions), called directly with
// programs a C caller could pass but porta's front end never makes: every backend refuses them with
// the same message, and writes nothing. (tests/algorithms/test_fuse.cpp runs valid programs.)
#include <string>
#include <vector>

#include "runtime/registry.hpp"
#include "support/support.hpp"

using porta::Device;
using porta::Shape;

TEST_CASE("fused: the map_program entry checks its program", "[fuse][abi]") {
  // What a C caller could pass: every backend refuses it with a message, none computes.
  const Device dev = PORTA_TEST_DEVICE();
  const auto a = porta::full<float>(Shape{4}, 1.0f, dev);
  const porta_backend_v1& t = porta::detail::backend_for(dev, "test_program_abi");
  const void* in[1] = {a.data()};
  auto y = porta::full<float>(Shape{4}, 0.0f, dev);
  porta_program_op ops[3] = {};
  ops[0].kind = PORTA_PROGRAM_INPUT;
  ops[1].kind = PORTA_PROGRAM_BINARY;  // a binary op on a stack of one
  ops[1].arg = PORTA_BINARY_ADD;
  REQUIRE(t.map_program(dev.index, PORTA_F32, 4, ops, 2, in, 1, y.data(), nullptr) == PORTA_ERR_INVALID);
  REQUIRE_THAT(std::string(t.last_error()), porta_test::Contains("map_program: op 1: binary op on a stack of 1"));
  ops[0].arg = 1;  // input 1 of 1
  REQUIRE(t.map_program(dev.index, PORTA_F32, 4, ops, 1, in, 1, y.data(), nullptr) == PORTA_ERR_INVALID);
  REQUIRE_THAT(std::string(t.last_error()), porta_test::Contains("loads input 1 of 1"));
  ops[0].arg = 0;
  ops[1].kind = PORTA_PROGRAM_UNARY;
  ops[1].arg = 99;
  REQUIRE(t.map_program(dev.index, PORTA_F32, 4, ops, 2, in, 1, y.data(), nullptr) == PORTA_ERR_INVALID);
  REQUIRE_THAT(std::string(t.last_error()), porta_test::Contains("unknown unary op 99"));
  ops[1].kind = 7;
  REQUIRE(t.map_program(dev.index, PORTA_F32, 4, ops, 2, in, 1, y.data(), nullptr) == PORTA_ERR_INVALID);
  ops[1].kind = PORTA_PROGRAM_SCALAR;  // leaves two values
  REQUIRE(t.map_program(dev.index, PORTA_F32, 4, ops, 2, in, 1, y.data(), nullptr) == PORTA_ERR_INVALID);
  REQUIRE_THAT(std::string(t.last_error()), porta_test::Contains("leaves 2 values"));
  porta_program_op deep[9] = {};  // nine loads: a stack of 9
  REQUIRE(t.map_program(dev.index, PORTA_F32, 4, deep, 9, in, 1, y.data(), nullptr) == PORTA_ERR_INVALID);
  REQUIRE_THAT(std::string(t.last_error()), porta_test::Contains("op 8: stack deeper than 8"));
  REQUIRE(t.map_program(dev.index, PORTA_F32, 4, ops, 0, in, 1, y.data(), nullptr) == PORTA_ERR_INVALID);
  REQUIRE(t.map_program(dev.index, PORTA_F32, 4, ops, 1, in, 9, y.data(), nullptr) == PORTA_ERR_INVALID);
  REQUIRE(y.to_vector() == std::vector<float>(4, 0.0f));
}
