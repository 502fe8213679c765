// std for NVRTC: what culua's numeric, math and functor headers (core/model/numeric.hpp,
// kernels/complex_math.cuh, kernels/elementwise_ops.cuh) use of <cstdint>, <type_traits> and
// <limits>, for device code: NVRTC has no C++ standard library. The first part of every fused
// kernel (fuse/prelude.hpp).
#define CULUA_FUSED_KERNEL 1
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t; typedef unsigned long long uint64_t;
typedef unsigned long size_t; typedef long long intptr_t; typedef unsigned long long uintptr_t;
namespace std { using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t; using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t; using ::size_t; }
namespace std {
template <class T, T v> struct integral_constant { static constexpr T value = v; using value_type = T; constexpr operator T() const { return v; } };
template <bool B> using bool_constant = integral_constant<bool, B>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;
template <class A, class B> struct is_same : false_type {};
template <class A> struct is_same<A, A> : true_type {};
template <class A, class B> inline constexpr bool is_same_v = is_same<A, B>::value;
template <bool C, class A, class B> struct conditional { using type = A; };
template <class A, class B> struct conditional<false, A, B> { using type = B; };
template <bool C, class A, class B> using conditional_t = typename conditional<C, A, B>::type;
template <bool C, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { using type = T; };
template <bool C, class T = void> using enable_if_t = typename enable_if<C, T>::type;
template <class T> struct remove_cv { using type = T; };
template <class T> struct remove_cv<const T> { using type = T; };
template <class T> struct remove_cv<volatile T> { using type = T; };
template <class T> struct remove_cv<const volatile T> { using type = T; };
template <class T> struct remove_reference { using type = T; };
template <class T> struct remove_reference<T&> { using type = T; };
template <class T> struct remove_reference<T&&> { using type = T; };
template <class T> using remove_reference_t = typename remove_reference<T>::type;
template <class T> using remove_cv_t = typename remove_cv<T>::type;
template <class T> using decay_t = remove_cv_t<remove_reference_t<T>>;
template <class T> struct is_integral_base : false_type {};
#define CULUA_INTEGRAL(T) template <> struct is_integral_base<T> : true_type {};
CULUA_INTEGRAL(bool) CULUA_INTEGRAL(char) CULUA_INTEGRAL(signed char) CULUA_INTEGRAL(unsigned char)
CULUA_INTEGRAL(short) CULUA_INTEGRAL(unsigned short) CULUA_INTEGRAL(int) CULUA_INTEGRAL(unsigned int)
CULUA_INTEGRAL(long) CULUA_INTEGRAL(unsigned long) CULUA_INTEGRAL(long long) CULUA_INTEGRAL(unsigned long long)
#undef CULUA_INTEGRAL
template <class T> inline constexpr bool is_integral_v = is_integral_base<remove_cv_t<T>>::value;
template <class T> inline constexpr bool is_floating_point_v = is_same_v<remove_cv_t<T>, float> || is_same_v<remove_cv_t<T>, double>;
template <class T> inline constexpr bool is_arithmetic_v = is_integral_v<T> || is_floating_point_v<T>;
template <class T> inline constexpr bool is_signed_v = is_arithmetic_v<T> && static_cast<T>(-1) < static_cast<T>(0);
template <class T> inline constexpr bool is_unsigned_v = is_arithmetic_v<T> && !(static_cast<T>(-1) < static_cast<T>(0));
template <class T> struct make_unsigned;
template <> struct make_unsigned<signed char> { using type = unsigned char; };
template <> struct make_unsigned<unsigned char> { using type = unsigned char; };
template <> struct make_unsigned<char> { using type = unsigned char; };
template <> struct make_unsigned<short> { using type = unsigned short; };
template <> struct make_unsigned<unsigned short> { using type = unsigned short; };
template <> struct make_unsigned<int> { using type = unsigned int; };
template <> struct make_unsigned<unsigned int> { using type = unsigned int; };
template <> struct make_unsigned<long> { using type = unsigned long; };
template <> struct make_unsigned<unsigned long> { using type = unsigned long; };
template <> struct make_unsigned<long long> { using type = unsigned long long; };
template <> struct make_unsigned<unsigned long long> { using type = unsigned long long; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;
template <class T> T&& declval() noexcept;
}
namespace std {
template <class T> struct numeric_limits;
#define CULUA_INT_LIMITS(T, LO, HI, D) template <> struct numeric_limits<T> { \
  static constexpr bool is_signed = (static_cast<T>(-1) < static_cast<T>(0)); static constexpr int digits = D; \
  __host__ __device__ static constexpr T min() { return LO; } __host__ __device__ static constexpr T max() { return HI; } \
  __host__ __device__ static constexpr T lowest() { return LO; } };
CULUA_INT_LIMITS(bool, false, true, 1)
CULUA_INT_LIMITS(signed char, -128, 127, 7)
CULUA_INT_LIMITS(unsigned char, 0, 255, 8)
CULUA_INT_LIMITS(short, -32768, 32767, 15)
CULUA_INT_LIMITS(unsigned short, 0, 65535, 16)
CULUA_INT_LIMITS(int, -2147483647 - 1, 2147483647, 31)
CULUA_INT_LIMITS(unsigned int, 0u, 4294967295u, 32)
CULUA_INT_LIMITS(long, -9223372036854775807L - 1, 9223372036854775807L, 63)
CULUA_INT_LIMITS(unsigned long, 0ul, 18446744073709551615ul, 64)
CULUA_INT_LIMITS(long long, -9223372036854775807LL - 1, 9223372036854775807LL, 63)
CULUA_INT_LIMITS(unsigned long long, 0ull, 18446744073709551615ull, 64)
#undef CULUA_INT_LIMITS
template <> struct numeric_limits<float> {
  static constexpr bool is_signed = true; static constexpr int digits = 24;
  __host__ __device__ static constexpr float min() { return 1.17549435e-38f; }
  __host__ __device__ static constexpr float max() { return 3.40282347e+38f; }
  __host__ __device__ static constexpr float lowest() { return -3.40282347e+38f; }
  __host__ __device__ static constexpr float epsilon() { return 1.19209290e-7f; }
  __host__ __device__ static float infinity() { return __int_as_float(0x7f800000); }
  __host__ __device__ static float quiet_NaN() { return __int_as_float(0x7fc00000); }
};
template <> struct numeric_limits<double> {
  static constexpr bool is_signed = true; static constexpr int digits = 53;
  __host__ __device__ static constexpr double min() { return 2.2250738585072014e-308; }
  __host__ __device__ static constexpr double max() { return 1.7976931348623157e+308; }
  __host__ __device__ static constexpr double lowest() { return -1.7976931348623157e+308; }
  __host__ __device__ static constexpr double epsilon() { return 2.2204460492503131e-16; }
  __host__ __device__ static double infinity() { return __longlong_as_double(0x7ff0000000000000LL); }
  __host__ __device__ static double quiet_NaN() { return __longlong_as_double(0x7ff8000000000000LL); }
};
}
