// core/model/dtype.hpp for NVRTC: the enum alone (op_table.hpp needs it; the names and sizes are host
// code).
namespace culua::detail {
enum class DType : uint8_t { F32, F64, F16, BF16, I8, I16, I32, I64, U8, U32, Bool, C64, C128, U16, U64 };
inline constexpr int kNumDTypes = 15;
}  // namespace culua::detail
