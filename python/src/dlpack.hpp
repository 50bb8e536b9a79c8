// SPDX-License-Identifier: Apache-2.0
// The DLPack C ABI (https://dmlc.github.io/dlpack/latest/c_api.html), versions 0.x and 1.x: porta's
// own definition of the structs, so that the module needs no dlpack.h. The layouts must match the
// specification byte for byte; the static_asserts below pin the sizes of the x86-64 and aarch64
// ABIs that NumPy, PyTorch and CuPy are built for.
#pragma once

#include <cstddef>
#include <cstdint>

namespace porta::python::dlpack {

// DLDeviceType: a C enum, so an int in the struct.
enum DeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // cudaMallocHost memory: host memory to porta
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLCUDAManaged = 13,
};

enum TypeCode : std::uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };

struct Device {
  std::int32_t device_type;  // DeviceType
  std::int32_t device_id;
};

struct DataType {
  std::uint8_t code;  // TypeCode
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; NULL means compact row-major (0.x producers)
  std::uint64_t byte_offset;
};

// The 0.x capsule payload ("dltensor").
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

struct PackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

inline constexpr std::uint64_t kFlagReadOnly = 1u << 0;
inline constexpr std::uint64_t kFlagIsCopied = 1u << 1;

// The 1.x capsule payload ("dltensor_versioned"): version first, so that a consumer can read it
// before trusting the rest of the layout.
struct ManagedTensorVersioned {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  std::uint64_t flags;
  Tensor dl_tensor;
};

inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 0;

// Capsule names: a consumer renames the capsule to the "used_" name when it takes ownership, and
// the capsule's destructor calls the deleter only while the name is still the unused one.
inline constexpr const char* kCapsule = "dltensor";
inline constexpr const char* kCapsuleUsed = "used_dltensor";
inline constexpr const char* kCapsuleVersioned = "dltensor_versioned";
inline constexpr const char* kCapsuleVersionedUsed = "used_dltensor_versioned";

static_assert(sizeof(Device) == 8 && sizeof(DataType) == 4, "DLPack: DLDevice / DLDataType layout");
static_assert(sizeof(void*) != 8 || sizeof(Tensor) == 48, "DLPack: DLTensor layout");
static_assert(sizeof(void*) != 8 || sizeof(ManagedTensor) == 64, "DLPack: DLManagedTensor layout");
static_assert(sizeof(void*) != 8 || offsetof(ManagedTensorVersioned, dl_tensor) == 32,
              "DLPack: DLManagedTensorVersioned layout");

}  // namespace porta::python::dlpack
