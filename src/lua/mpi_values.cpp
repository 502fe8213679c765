#include "lua/mpi_values.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/base/error.hpp"
#include "core/ops/ops.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

constexpr int kMaxDepth = 200;

enum Tag : char {
  kNil = 'n',
  kFalse = 'f',
  kTrue = 't',
  kInteger = 'i',
  kFloat = 'd',
  kString = 's',
  kTable = 'T',
  kArray = 'A',
};

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

class Packer {
 public:
  Packer(lua_State* L, bool lenient) : L_(L), lenient_(lenient) {}

  // Appends the value at idx; false when it cannot travel (lenient mode only).
  bool pack(int idx, const std::string& place) {
    idx = lua_absindex(L_, idx);
    switch (lua_type(L_, idx)) {
      case LUA_TNIL:
        out.push_back(kNil);
        return true;
      case LUA_TBOOLEAN:
        out.push_back(lua_toboolean(L_, idx) ? kTrue : kFalse);
        return true;
      case LUA_TNUMBER:
        if (lua_isinteger(L_, idx)) {
          out.push_back(kInteger);
          put<int64_t>(out, lua_tointeger(L_, idx));
        } else {
          out.push_back(kFloat);
          put<double>(out, lua_tonumber(L_, idx));
        }
        return true;
      case LUA_TSTRING: {
        size_t n = 0;
        const char* s = lua_tolstring(L_, idx, &n);
        out.push_back(kString);
        put<uint64_t>(out, n);
        out.append(s, n);
        return true;
      }
      case LUA_TTABLE:
        return pack_table(idx, place);
      case LUA_TUSERDATA:
        if (ArrayBox* box = test_array(L_, idx)) {
          pack_array(box->array, place);
          return true;
        }
        break;
      default:
        break;
    }
    if (lenient_) return false;
    fail(ErrorKind::Type,
         "{} is a {}; cu.mpi sends nil, booleans, numbers, strings, tables and cu.Array values",
         place, luaL_typename(L_, idx));
  }

  std::string out;

 private:
  bool pack_table(int idx, const std::string& place) {
    const void* p = lua_topointer(L_, idx);
    for (const void* q : path_) {
      if (q != p) continue;
      if (lenient_) return false;
      fail(ErrorKind::Value, "{} contains itself (a cycle); cu.mpi sends trees of tables", place);
    }
    if (path_.size() >= kMaxDepth) {
      fail(ErrorKind::Value, "{} nests tables deeper than {} levels", place, kMaxDepth);
    }
    check_stack(L_, 4, "cu.mpi");
    path_.push_back(p);
    out.push_back(kTable);
    const size_t count_at = out.size();
    put<uint64_t>(out, 0);
    uint64_t count = 0;
    lua_pushnil(L_);
    while (lua_next(L_, idx)) {
      const int value = lua_gettop(L_);
      const int key = value - 1;
      const std::string inner = place + key_text(key);
      const size_t mark = out.size();
      if (lua_type(L_, key) == LUA_TTABLE || lua_type(L_, key) == LUA_TUSERDATA) {
        if (!lenient_) {
          fail(ErrorKind::Type,
               "{} has a {} key; cu.mpi sends keys that are numbers, strings or "
               "booleans",
               place, luaL_typename(L_, key));
        }
      } else if (pack(key, inner) && pack(value, inner)) {
        ++count;
        lua_pop(L_, 1);
        continue;
      }
      out.resize(mark);  // lenient: the member is left out
      lua_pop(L_, 1);
    }
    std::memcpy(out.data() + count_at, &count, sizeof count);
    path_.pop_back();
    return true;
  }

  void pack_array(const Array& a, const std::string& place) {
    a.check_alive(place);
    out.push_back(kArray);
    out.push_back(static_cast<char>(a.dtype()));
    out.push_back(static_cast<char>(a.location()));
    out.push_back(static_cast<char>(a.ndim()));
    const Shape s = a.shape();
    for (int i = 0; i < s.ndim; ++i) put<int64_t>(out, s[i]);
    const std::vector<unsigned char> bytes = read_contiguous(runtime(L_), a);
    out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }

  std::string key_text(int key) {
    if (lua_type(L_, key) == LUA_TSTRING) return std::string(".") + lua_tostring(L_, key);
    if (lua_type(L_, key) == LUA_TNUMBER) {
      lua_pushvalue(L_, key);  // converted on a copy: lua_next needs the key unchanged
      std::string s = std::string("[") + lua_tostring(L_, -1) + "]";
      lua_pop(L_, 1);
      return s;
    }
    return std::string("[") + luaL_typename(L_, key) + "]";
  }

  lua_State* L_;
  bool lenient_;
  std::vector<const void*> path_;
};

class Unpacker {
 public:
  Unpacker(lua_State* L, std::string_view bytes) : L_(L), in_(bytes) {}

  void unpack(int depth) {
    if (depth > kMaxDepth + 1) corrupt();
    check_stack(L_, 4, "cu.mpi");
    switch (take<char>()) {
      case kNil:
        lua_pushnil(L_);
        return;
      case kFalse:
        lua_pushboolean(L_, 0);
        return;
      case kTrue:
        lua_pushboolean(L_, 1);
        return;
      case kInteger:
        lua_pushinteger(L_, take<int64_t>());
        return;
      case kFloat:
        lua_pushnumber(L_, take<double>());
        return;
      case kString: {
        const uint64_t n = take<uint64_t>();
        const std::string_view s = bytes(n);
        lua_pushlstring(L_, s.data(), s.size());
        return;
      }
      case kTable: {
        const uint64_t n = take<uint64_t>();
        if (n > in_.size()) corrupt();
        lua_createtable(L_, 0, static_cast<int>(n));
        for (uint64_t i = 0; i < n; ++i) {
          unpack(depth + 1);
          unpack(depth + 1);
          if (lua_isnil(L_, -2)) corrupt();
          lua_rawset(L_, -3);
        }
        return;
      }
      case kArray:
        unpack_array();
        return;
      default:
        corrupt();
    }
  }

  void finish() const {
    if (at_ != in_.size()) corrupt();
  }

 private:
  template <class T>
  T take() {
    const std::string_view b = bytes(sizeof(T));
    T v;
    std::memcpy(&v, b.data(), sizeof v);
    return v;
  }

  std::string_view bytes(uint64_t n) {
    if (n > in_.size() - at_) corrupt();
    const std::string_view b = in_.substr(at_, n);
    at_ += n;
    return b;
  }

  void unpack_array() {
    const auto dtype = static_cast<uint8_t>(take<char>());
    const auto loc = static_cast<uint8_t>(take<char>());
    const auto ndim = static_cast<uint8_t>(take<char>());
    if (dtype >= kNumDTypes || loc > static_cast<uint8_t>(Location::Pageable) || ndim > kMaxDims)
      corrupt();
    Shape s;
    for (int i = 0; i < ndim; ++i) {
      const int64_t d = take<int64_t>();
      if (d < 0) corrupt();
      s.push(d);
    }
    const auto t = static_cast<DType>(dtype);
    const int64_t n = checked_numel(s, itemsize(t));
    const std::string_view data = bytes(static_cast<uint64_t>(n) * itemsize(t));
    Runtime& rt = runtime(L_);
    Array a = empty(rt, s, t, static_cast<Location>(loc));
    if (n > 0) {
      Array src = Array::wrap(rt.backend_ptr(), const_cast<char*>(data.data()), s, t,
                              Location::Pageable, rt.device());
      copy(rt, a, src);
    }
    push_array(L_, std::move(a));
  }

  [[noreturn]] void corrupt() const {
    fail(ErrorKind::Value, "a message that cu.mpi did not make (or a corrupt one)");
  }

  lua_State* L_;
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace

std::string pack_value(lua_State* L, int idx, const char* what, bool lenient) {
  Packer p(L, lenient);
  if (!p.pack(idx, what)) p.out.push_back(kNil);
  return std::move(p.out);
}

void unpack_value(lua_State* L, std::string_view bytes) {
  Unpacker u(L, bytes);
  const int top = lua_gettop(L);
  u.unpack(0);
  u.finish();
  lua_settop(L, top + 1);
}

}  // namespace culua::detail::lua
