// SPDX-License-Identifier: Apache-2.0
// porta's errors. Every failure is a porta::Error; the subclass says what kind, the message names
// the function and the values involved:
//
//   try { auto c = porta::matmul(a, b); }
//   catch (const porta::InvalidArgument& e) { std::cerr << e.what(); }
//   // porta::matmul: inner dimensions differ (A is 3x4, B is 5x2)
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "porta/device.hpp"

namespace porta {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Shapes, axes, dtypes or values that the function does not accept.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// Arrays (or an array and a stream) on different devices in one call. Data moves only when the
// user asks (Array::to, porta::copy).
class DeviceMismatch : public Error {
 public:
  using Error::Error;
};

// An allocation failed. The process and all other arrays stay usable.
class OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& what, Device device, std::uint64_t requested, std::uint64_t free_bytes)
      : Error(what), device_(device), requested_(requested), free_(free_bytes) {}
  Device device() const noexcept { return device_; }
  std::uint64_t requested_bytes() const noexcept { return requested_; }
  std::uint64_t free_bytes() const noexcept { return free_; }

 private:
  Device device_;
  std::uint64_t requested_;
  std::uint64_t free_;
};

// A backend or device that was not built, did not load, or has no devices; the message says why.
class Unavailable : public Error {
 public:
  using Error::Error;
};

// A vendor call failed (cudaMemcpyAsync, cublasSgemm, ...); the message names the call and code.
class BackendError : public Error {
 public:
  using Error::Error;
};

// A kernel reported a failure: an index outside a bounds-checked View (PORTA_BOUNDS_CHECK), or a
// call of porta::fail in the kernel (porta/debug.hpp). On the CPU it is thrown by the launch
// itself; a GPU kernel records its first failure and the next wait on that device (a stream's or
// event's synchronize, porta::synchronize, a copy to the host) raises it. The message names the
// call, the kernel when it has a name, the device, and what failed:
//   porta::synchronize: kernel 'smooth' on cuda:0: index 12 is out of bounds for array 'u' of shape (10)
class KernelError : public Error {
 public:
  using Error::Error;
};

// A matrix that a factorisation cannot take (NumPy's numpy.linalg.LinAlgError): singular in
// porta::linalg::solve and inv, not positive definite in cholesky, no convergence in eigh or svd.
// The message names the function and the matrix; index() is that matrix's place in the batch (0
// for a single matrix) and info() LAPACK's code for it (the 1-based column of the zero pivot, the
// order of the leading minor that is not positive definite).
//   porta::linalg::solve: matrix 3 of the batch is singular (U(2, 2) is exactly zero)
class LinAlgError : public Error {
 public:
  LinAlgError(const std::string& what, std::int64_t index, std::int32_t info)
      : Error(what), index_(index), info_(info) {}
  std::int64_t index() const noexcept { return index_; }
  std::int32_t info() const noexcept { return info_; }

 private:
  std::int64_t index_;
  std::int32_t info_;
};

}  // namespace porta
