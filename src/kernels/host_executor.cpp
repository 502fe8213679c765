#include "kernels/host_executor.hpp"

#include "core/backend/reduce_call.hpp"
#include "core/backend/scan_call.hpp"
#include "core/backend/sort_call.hpp"
#include "core/base/scratch.hpp"
#include "kernels/host_scratch.hpp"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::host {

namespace {

class Executor final : public HostExecutor {
 public:
  void fill(const StridedView& dst, const void* value) override { host::fill(dst, value); }
  void copy_cast(const StridedView& dst, const StridedView& src) override {
    host::copy_cast(dst, src);
  }
  void sequence(const StridedView& dst, const SequenceSpec& spec) override {
    host::sequence(dst, spec);
  }
  void elementwise(const ElementwiseCall& c) override { host::elementwise(c); }
  // The temporaries count against the runtime's quota while the call runs (core/base/scratch.hpp).
  void reduce(const ReduceCall& c) override {
    const ScratchToken scratch = reserve_scratch(reduce_scratch_bytes(c), c.name());
    host::reduce(c);
  }
  void scan(const ScanCall& c) override {
    const ScratchToken scratch = reserve_scratch(scan_scratch_bytes(c), c.name());
    host::scan(c);
  }
  void random(const RandomCall& c) override { host::random(c); }
  void gather(const GatherCall& c) override { host::gather(c); }
  void sort(const SortCall& c) override {
    const ScratchToken scratch = reserve_scratch(sort_scratch_bytes(c), c.name());
    host::sort(c);
  }
};

}  // namespace

std::shared_ptr<HostExecutor> executor() {
  static const std::shared_ptr<HostExecutor> instance = std::make_shared<Executor>();
  return instance;
}

}  // namespace culua::detail::kernels::host
