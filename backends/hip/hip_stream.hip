// SPDX-License-Identifier: Apache-2.0
// Streams and events of the HIP plugin. A porta_stream is the hipStream_t itself (NULL: the
// device's null stream), a porta_event the hipEvent_t, so user kernels launch on them directly.
#include "backends/hip/hip_backend.hpp"
#include "backends/hip/hip_common.hpp"

namespace porta::detail::hip {
namespace {

hipStream_t native(porta_stream s) {
  return reinterpret_cast<hipStream_t>(s);
}
hipEvent_t native(porta_event e) {
  return reinterpret_cast<hipEvent_t>(e);
}

// hipErrorNotReady is an answer, not a failure.
porta_status query_result(hipError_t e, int* done, const char* fn, const char* call) {
  if (e == hipSuccess) {
    *done = 1;
    return PORTA_OK;
  }
  if (e == hipErrorNotReady) {
    (void)hipGetLastError();
    *done = 0;
    return PORTA_OK;
  }
  return fail(e, fn, call);
}

}  // namespace

porta_status stream_create(int dev, porta_stream* out) noexcept {
  constexpr const char* fn = "stream_create";
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: out is NULL", fn);
  *out = nullptr;
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  hipStream_t s = nullptr;
  // Blocking with respect to the null stream, where porta frees arrays: a free waits for the work
  // queued on this stream before it (docs/architecture.md, "Memory and execution").
  PORTA_HIP_CHECK(fn, hipStreamCreateWithFlags(&s, hipStreamDefault));
  *out = reinterpret_cast<porta_stream>(s);
  return PORTA_OK;
}

porta_status stream_destroy(int dev, porta_stream s) noexcept {
  constexpr const char* fn = "stream_destroy";
  if (s == nullptr) return PORTA_OK;  // the null stream is not ours to destroy
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  PORTA_HIP_CHECK(fn, hipStreamSynchronize(native(s)));
  PORTA_HIP_CHECK(fn, hipStreamDestroy(native(s)));
  return PORTA_OK;
}

porta_status stream_synchronize(int dev, porta_stream s) noexcept {
  constexpr const char* fn = "stream_synchronize";
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  PORTA_HIP_CHECK(fn, hipStreamSynchronize(native(s)));
  return PORTA_OK;
}

porta_status stream_query(int dev, porta_stream s, int* done) noexcept {
  constexpr const char* fn = "stream_query";
  if (done == nullptr) return set_error(PORTA_ERR_INVALID, "%s: done is NULL", fn);
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  return query_result(hipStreamQuery(native(s)), done, fn, "hipStreamQuery");
}

porta_status stream_wait_event(int dev, porta_stream s, porta_event e) noexcept {
  constexpr const char* fn = "stream_wait_event";
  if (e == nullptr) return set_error(PORTA_ERR_INVALID, "%s: event is NULL", fn);
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  PORTA_HIP_CHECK(fn, hipStreamWaitEvent(native(s), native(e), 0));
  return PORTA_OK;
}

porta_status event_create(int dev, porta_event* out) noexcept {
  constexpr const char* fn = "event_create";
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: out is NULL", fn);
  *out = nullptr;
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  hipEvent_t e = nullptr;
  // With timing: the ABI offers event_elapsed_ms on every event.
  PORTA_HIP_CHECK(fn, hipEventCreateWithFlags(&e, hipEventDefault));
  *out = reinterpret_cast<porta_event>(e);
  return PORTA_OK;
}

porta_status event_destroy(int dev, porta_event e) noexcept {
  constexpr const char* fn = "event_destroy";
  if (e == nullptr) return PORTA_OK;
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  PORTA_HIP_CHECK(fn, hipEventDestroy(native(e)));
  return PORTA_OK;
}

porta_status event_record(int dev, porta_event e, porta_stream s) noexcept {
  constexpr const char* fn = "event_record";
  if (e == nullptr) return set_error(PORTA_ERR_INVALID, "%s: event is NULL", fn);
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  PORTA_HIP_CHECK(fn, hipEventRecord(native(e), native(s)));
  return PORTA_OK;
}

porta_status event_synchronize(int dev, porta_event e) noexcept {
  constexpr const char* fn = "event_synchronize";
  if (e == nullptr) return set_error(PORTA_ERR_INVALID, "%s: event is NULL", fn);
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  PORTA_HIP_CHECK(fn, hipEventSynchronize(native(e)));
  return PORTA_OK;
}

porta_status event_query(int dev, porta_event e, int* done) noexcept {
  constexpr const char* fn = "event_query";
  if (e == nullptr || done == nullptr) return set_error(PORTA_ERR_INVALID, "%s: NULL argument", fn);
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  return query_result(hipEventQuery(native(e)), done, fn, "hipEventQuery");
}

porta_status event_elapsed_ms(int dev, porta_event start, porta_event end, float* ms) noexcept {
  constexpr const char* fn = "event_elapsed_ms";
  if (start == nullptr || end == nullptr || ms == nullptr) return set_error(PORTA_ERR_INVALID, "%s: NULL argument", fn);
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  PORTA_HIP_CHECK(fn, hipEventElapsedTime(ms, native(start), native(end)));
  return PORTA_OK;
}

}  // namespace porta::detail::hip
