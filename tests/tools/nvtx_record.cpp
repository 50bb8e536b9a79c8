// SPDX-License-Identifier: Apache-2.0
// An NVTX injection library of porta's own, standing in for Nsight Systems: NVTX loads the library
// named in NVTX_INJECTION64_PATH at the first NVTX call, as it loads nsys's, and this one writes
// every range push and pop of the process to the file named in PORTA_NVTX_RECORD, one per line
// ("push <name>", "pop"). With it, a test checks the ranges the CUDA plugin opens without a
// profiler that the test machine may lack.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace {

std::mutex g_mutex;
std::FILE* g_file = nullptr;

void write_line(const char* kind, const char* name) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_file == nullptr) return;
  std::fprintf(g_file, name != nullptr ? "%s %s\n" : "%s\n", kind, name);
  std::fflush(g_file);
}

int NVTX_API push_a(const char* message) {
  write_line("push", message);
  return 0;
}
int NVTX_API push_ex(const nvtxEventAttributes_t* a) {
  write_line("push", a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "(not ascii)");
  return 0;
}
int NVTX_API pop() {
  write_line("pop", nullptr);
  return 0;
}

}  // namespace

extern "C" NVTX_DYNAMIC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const char* path = std::getenv("PORTA_NVTX_RECORD");
  if (path == nullptr || get_export_table == nullptr) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable core = nullptr;
  unsigned int size = 0;
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &size) == 0 ||
      core == nullptr || size <= NVTX_CBID_CORE_RangePop)
    return 0;
  g_file = std::fopen(path, "w");
  if (g_file == nullptr) return 0;
  *core[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(&push_a);
  *core[NVTX_CBID_CORE_RangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&push_ex);
  *core[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  return 1;
}
