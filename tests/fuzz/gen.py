#!/usr/bin/env python3
"""Generates random Lua programs over the whole `cu` API of culua, each deterministic from a seed.

A program is a prelude (helpers and a pool of values), then one statement per line, each run
under pcall by T(id, fn), then the epilogue that prints FUZZ-DONE. The runner (tests/fuzz/run.py)
treats a crash, an abort, a sanitizer report, a hang, a C++ message leaking into an error, an
abnormal exit and a line starting with FUZZ-MISMATCH (an oracle that failed) as findings.

Arguments are chosen to hurt: NaN, inf, -0.0, huge, negative and fractional sizes, shapes whose
product overflows int64, 0-size and 9-D and deeper shapes, every dtype and bad ones, freed arrays
and their views, methods called on the wrong type, option typos and options of the wrong type,
coroutine yields and errors inside callbacks (cu.bench, cu.sweep, cu.graph, cu.time, __gc), and
misuse of streams, events and graphs. Some statements carry oracles: results compared with the same
computation in plain Lua.

    python3 tests/fuzz/gen.py SEED [STATEMENTS]   # prints the program
"""
import random
import sys

DTYPES = ["f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u32", "bool", "c64", "c128"]
ALIASES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
           "uint32", "complex64", "complex128", "double"]
BAD_DTYPES = ['"f33"', '""', "1", "true", '"F32"', '"float"', "{}", '"i32 "', '"u64"', "0/0"]

NASTY_NUMBERS = ["0/0", "1/0", "-1/0", "-0.0", "2^53", "2^63", "math.maxinteger", "math.mininteger",
                 "-1", "0.5", "1e308", "-3", "3.7", "1e-320", "2^31", "-2^31", "2^32", "255", "256",
                 "-129", "65504", "65520", "3.4e38", "1e39"]
NASTY_VALUES = NASTY_NUMBERS + ['"3"', '"x"', "nil", "true", "false", "{}", "print", "cu",
                                "cu.complex(1, 2)", "cu.complex(0/0, 1/0)", "coroutine.create(print)",
                                "io.stdout", "A[1]", "S[1]", "E[1]", "G[1]"]
NASTY_SIZES = ["-1", "0", "1.5", "0/0", "1/0", "-1/0", "2^31", "2^32 + 1", "2^62", "math.maxinteger",
               "math.mininteger", '"4"', '"four"', "{}", "true", "-0.0", "1e300", "2^63", "-2^63",
               "4.0", "nil"]
OVERFLOW_SHAPES = ["{2^32, 2^32, 4}", "{math.maxinteger, 2}", "{0, 2^62}", "{2^62, 0, 3}",
                   "{2^21, 2^21, 2^21, 2^21}", "{-1}", "{3, -2}", "{1.5}", '{"2"}', "{2, nil, 3}",
                   "{{2}}", "{0/0}", "{1/0}", "{2^31, 2^31}", "{65536, 65536, 65536}",
                   "{1,1,1,1,1,1,1,1,1}", "{1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1}",
                   "{2,2,2,2,2,2,2,2,2}", "{0,0,0,0,0,0,0,0}", "{1,2,1,2,1,2,1,2}",
                   "{[1] = 2, [3] = 4}", "{n = 3}", "setmetatable({}, {__len = function() return 3 end})"]
OPTION_TYPOS = ["steam", "dtyp", "axes", "keepdim", "ouT", "max_tme", "seeds", "pinnned", "prioirty",
                "timming", "nam", "warm_up", "", "1"]
METHODS = ["view", "reshape", "narrow", "transpose", "contiguous", "astype", "clone", "fill", "free",
           "item", "totable", "to_host", "to_device", "add", "sub", "mul", "div", "pow", "maximum",
           "minimum", "floordiv", "mod", "eq", "ne", "lt", "le", "gt", "ge", "neg", "abs", "exp",
           "log", "sqrt", "sin", "cos", "tanh", "conj", "real", "imag", "sum", "mean", "max", "min",
           "prod", "norm", "argmax", "argmin", "matmul", "dot"]
STREAM_METHODS = ["sync", "done", "wait"]
EVENT_METHODS = ["record", "sync", "done", "elapsed"]
GRAPH_METHODS = ["launch", "replay", "update", "free"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "floordiv", "mod", "eq", "ne", "lt",
          "le", "gt", "ge"]
UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "conj", "real", "imag"]
REDUCE = ["sum", "mean", "max", "min", "prod", "norm", "argmax", "argmin"]
OPERATORS = ["+", "-", "*", "/", "//", "%", "^", "..", "==", "<", "<=", "&", "|"]
POOL = 8

PRELUDE = r'''-- culua fuzz program (tests/fuzz/gen.py), seed %(seed)d
local cu = require "cu"
io.stdout:setvbuf("line")
local A, S, E, G, K, X = {}, {}, {}, {}, {}, {}
KEEP = {}
local ID = 0
local function errtext(e)
  local ok, s = pcall(tostring, e)
  return ok and s or ("<" .. type(e) .. ">")
end
local function T(id, fn)
  ID = id
  local ok, e = pcall(fn)
  if not ok then print("E" .. id .. " " .. errtext(e):gsub("\n", " | "):sub(1, 300)) end
end
local function MISMATCH(id, what, got, want)
  print(string.format("FUZZ-MISMATCH %%d %%s: got %%s, want %%s", id, what, errtext(got), errtext(want)))
end
local function f32(x) return (string.unpack("f", string.pack("f", x))) end
local function same(a, b)
  if a ~= a then return b ~= b end
  return a == b
end
local function near(a, b, tol)
  if a ~= a then return b ~= b end
  if a == b then return true end
  return math.abs(a - b) <= tol * math.max(1, math.abs(a), math.abs(b))
end
local function wrap(x, bits, signed)
  local m = 1 << bits
  x = x & (m - 1)
  if signed and x >= (m >> 1) then x = x - m end
  return x
end
local function flat(t, out)
  out = out or {}
  if type(t) ~= "table" then out[#out + 1] = t return out end
  for i = 1, #t do flat(t[i], out) end
  return out
end
local function check_list(id, what, got, want, cmp)
  got = flat(got)
  if #got ~= #want then return MISMATCH(id, what .. " length", #got, #want) end
  for i = 1, #want do
    if not cmp(got[i], want[i]) then return MISMATCH(id, what .. "[" .. i .. "]", got[i], want[i]) end
  end
end
local function yield_if_possible(...)
  if coroutine.isyieldable() then return coroutine.yield(...) end
end
local function any(t) return t[1] end
-- The pool: arrays of many kinds to start from (each made alone: one failure leaves the rest).
local starts = {
  function() return cu.zeros({3, 4}, "f32") end,
  function() return cu.arange(12, "i32") end,
  function() return cu.ones(5, "f64") end,
  function() return A[1] and A[1]:narrow(2, 2, 2) or cu.zeros(2) end,
  function() return cu.host.zeros({2, 3}, "i64") end,
  function() return cu.array({{1, 2}, {3, 4}}, "c64") end,
  function() return cu.zeros({2, 0, 3}, "u8") end,
  function() return cu.ones({1, 2, 1, 2, 1, 2, 1, 2}, "bool") end,
}
for i = 1, #starts do T(0, function() A[i] = starts[i]() end) end
T(0, function() S[1] = cu.stream() S[2] = cu.stream{priority = "high"} S[3] = cu.current_stream() end)
T(0, function() E[1] = cu.event() E[2] = cu.event{timing = false} end)
T(0, function() G[1] = cu.graph(function() A[3]:fill(2) end) end)
local function method(o, name)
  local mt = getmetatable(o)
  local ix = mt and mt.__index
  if type(ix) == "function" then return ix(o, name) end
  if type(ix) == "table" then return ix[name] end
end
'''

EPILOGUE = r'''T(-1, function() cu.sync() end)
collectgarbage()
print("FUZZ-DONE")
'''


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.seed = seed
        self.sid = 0

    # -- values -------------------------------------------------------------------------------
    def chance(self, p):
        return self.r.random() < p

    def choice(self, xs):
        return self.r.choice(xs)

    def small(self, lo=0, hi=5):
        return self.r.randint(lo, hi)

    def dtype(self):
        p = self.r.random()
        if p < 0.75:
            return '"%s"' % self.choice(DTYPES)
        if p < 0.9:
            return '"%s"' % self.choice(ALIASES)
        return self.choice(BAD_DTYPES)

    def number(self):
        p = self.r.random()
        if p < 0.4:
            return str(self.small(-3, 9))
        if p < 0.6:
            return "%.3f" % self.r.uniform(-10, 10)
        return "(%s)" % self.choice(NASTY_NUMBERS)

    def scalar(self):
        p = self.r.random()
        if p < 0.7:
            return self.number()
        if p < 0.8:
            return self.choice(["true", "false"])
        if p < 0.9:
            return "cu.complex(%s, %s)" % (self.number(), self.number())
        return self.choice(NASTY_VALUES)

    def size(self):
        return str(self.small(0, 6)) if self.chance(0.8) else "(%s)" % self.choice(NASTY_SIZES)

    def shape(self):
        p = self.r.random()
        if p < 0.25:
            return str(self.small(0, 8))
        if p < 0.75:
            n = self.choice([0, 1, 1, 2, 2, 2, 3, 3, 4, 8, 9])
            dims, prod = [], 1
            for _ in range(n):
                d = self.small(0, 4) if prod < 256 else 1
                prod *= max(d, 1)
                dims.append(str(d))
            return "{" + ", ".join(dims) + "}"
        if p < 0.85:
            return "{" + ", ".join(self.size() for _ in range(self.small(1, 3))) + "}"
        return self.choice(OVERFLOW_SHAPES)

    def host_shape(self):
        shape = self.shape()
        if any(big in shape for big in ("2^31", "2^32 + 1", "65536", "2^62", "1e300", "math.maxinteger")):
            return self.choice(["{2^32, 2^32, 4}", "{math.maxinteger, 2}", "{2^62, 4}", "{-1}", "{0/0}", "{2^64}"])
        return shape

    def arr(self):
        p = self.r.random()
        if p < 0.8:
            return "A[%d]" % self.small(1, POOL)
        if p < 0.9:
            return "A[%d][%d]" % (self.small(1, POOL), self.small(-2, 3))
        return self.choice(["S[1]", "E[1]", "G[1]", "K[1]", "(nil)", "({})", "(1)", '("a")', "cu"])

    def operand(self):
        return self.arr() if self.chance(0.6) else self.scalar()

    def stream(self):
        p = self.r.random()
        if p < 0.6:
            return "S[%d]" % self.small(1, 3)
        if p < 0.8:
            return "cu.current_stream()"
        return self.choice(["E[1]", "A[1]", "(5)", '("s")', "(true)", "G[1]"])

    def opts(self, fields):
        """An options table from fields {name: generator}, sometimes with typos or wrong types."""
        p = self.r.random()
        if p < 0.2:
            return self.choice(["nil", "nil", "nil", "5", '"opts"', "true", "A[1]"])
        items = []
        for name, gen in fields.items():
            if self.chance(0.35):
                if self.chance(0.1):
                    items.append("%s = %s" % (name, self.choice(NASTY_VALUES)))
                else:
                    items.append("%s = %s" % (name, gen()))
        if self.chance(0.1):
            typo = self.choice(OPTION_TYPOS)
            key = typo if typo.isidentifier() else '["%s"]' % typo
            items.append("%s = %s" % (key, self.scalar()))
        if self.chance(0.03):
            items.append("[1] = 2")
        return "{" + ", ".join(items) + "}"

    def stream_opts(self):
        return self.opts({"stream": self.stream})

    def create_opts(self):
        return self.opts({"dtype": self.dtype, "stream": self.stream,
                          "pinned": lambda: self.choice(["true", "false", "1"])})

    def lua_values(self, n, kind):
        if kind == "int":
            return [self.small(-50, 50) for _ in range(n)]
        if kind == "small":
            return [self.small(-9, 9) for _ in range(n)]
        return [self.r.choice([self.small(-9, 9), round(self.r.uniform(-100, 100), 3)])
                for _ in range(n)]

    def table(self, vals):
        return "{" + ", ".join("math.mininteger" if v == -(1 << 63) else str(v) for v in vals) + "}"

    def fn_body(self, depth=0):
        """A callback body for cu.bench, cu.sweep, cu.graph, cu.time, __gc..."""
        parts = []
        for _ in range(self.small(1, 3)):
            p = self.r.random()
            if p < 0.3:
                parts.append(self.array_statement())
            elif p < 0.4:
                parts.append("yield_if_possible(%s)" % self.arr())
            elif p < 0.47:
                parts.append("coroutine.yield()")
            elif p < 0.55:
                parts.append("error(%s)" % self.choice(['"boom"', "{}", "nil", "cu.complex(1)", "A[1]",
                                                          "setmetatable({}, {__tostring = function() error('x') end})"]))
            elif p < 0.6:
                parts.append("%s:free()" % self.arr())
            elif p < 0.65:
                parts.append("cu.sync()")
            elif p < 0.7:
                parts.append("collectgarbage()")
            elif p < 0.75 and depth < 1:
                parts.append(self.callback_statement(depth + 1))
            elif p < 0.8:
                parts.append("cu.use_stream(%s)" % self.stream())
            elif p < 0.85:
                parts.append("return %s" % self.operand())
            else:
                parts.append(self.array_statement())
        # A return must be the last statement of a block.
        out = []
        for part in parts:
            out.append("do %s end" % part if part.startswith("return") else part)
        return "; ".join(out)

    def func(self, depth=0, params="..."):
        return "function(%s) %s end" % (params, self.fn_body(depth))

    # -- statements ---------------------------------------------------------------------------
    def slot(self):
        return "A[%d]" % self.small(1, POOL)

    def create_statement(self):
        f = self.choice(["empty", "zeros", "ones", "full", "array", "arange", "linspace", "rand",
                         "randn", "host.empty", "host.zeros", "host.ones", "host.full", "host.array",
                         "host.rand", "host.randn"])
        name = f.split(".")[-1]
        if name == "full":
            args = [self.host_shape() if f.startswith("host.") else self.shape(), self.scalar()]
        elif name == "array":
            args = [self.choice([self.table(self.lua_values(self.small(0, 5), "float")),
                                 "{{1, 2}, {3}}", "{{}, {}}", "{}", "{{{{{{{{{{1}}}}}}}}}}",
                                 self.scalar(), self.arr(), "{1, 'a'}", "{true, 1}",
                                 "{cu.complex(1, 2), 3}", "{0/0, 1/0, -0.0}", "{A[1], A[2]}"])]
        elif name == "arange":
            args = [self.number() for _ in range(self.choice([1, 2, 3]))]
        elif name == "linspace":
            args = [self.number(), self.number(), self.size()]
        elif f.startswith("host."):
            # host memory has no limit but the machine's: huge shapes only where they must fail
            args = [self.host_shape()]
        else:
            args = [self.shape()]
        if self.chance(0.7):
            args.append(self.dtype())
        if self.chance(0.4):
            args.append(self.create_opts())
        return "%s = cu.%s(%s)" % (self.slot(), f, ", ".join(a for a in args if a))

    def view_statement(self):
        a = self.arr()
        p = self.r.random()
        if p < 0.2:
            if self.chance(0.5):
                return "%s = %s:view(%s)" % (self.slot(), a, self.shape())
            return "%s = %s:reshape(%s)" % (self.slot(), a, ", ".join(self.size() for _ in range(self.small(0, 4))))
        if p < 0.4:
            return "%s = %s:narrow(%s, %s, %s)" % (self.slot(), a, self.size(), self.size(), self.size())
        if p < 0.55:
            return "%s = %s:transpose(%s)" % (self.slot(), a, ", ".join(self.size() for _ in range(self.small(0, 2))))
        if p < 0.7:
            return "%s = %s[%s]" % (self.slot(), a, self.choice([self.size(), "-1", "-100", "1", "0", "'shape'", "'nope'", "{}"]))
        if p < 0.85:
            return "%s[%s] = %s" % (a, self.choice([self.size(), "-1", "1", "'x'", "0/0"]), self.operand())
        return "X[1] = {#%s, %s.shape, %s.dtype, %s.ndim, %s.size, %s.nbytes, %s.location, %s.device, %s.strides, %s.is_contiguous, %s.freed}" % ((a,) * 11)

    def method_statement(self):
        a = self.arr()
        m = self.choice(["contiguous", "astype", "clone", "fill", "free", "item", "totable", "to_host",
                         "to_device", "tostring"])
        if m == "astype":
            return "%s = %s:astype(%s%s)" % (self.slot(), a, self.dtype(), self.maybe(", " + self.stream_opts()))
        if m == "fill":
            return "%s:fill(%s%s)" % (a, self.scalar(), self.maybe(", " + self.stream_opts()))
        if m == "free":
            return "%s:free()" % a
        if m in ("item", "totable"):
            return "X[2] = %s:%s()" % (a, m)
        if m == "to_host":
            return "%s = %s:to_host(%s)" % (self.slot(), a, self.opts({"pinned": lambda: self.choice(["true", "false"]), "stream": self.stream}))
        if m == "to_device":
            return "%s = %s:to_device(%s)" % (self.slot(), a, self.choice(["", "0", "1", "-1", "0.5", "nil, " + self.stream_opts(), "0, " + self.stream_opts(), "0/0"]))
        if m == "tostring":
            return "X[3] = tostring(%s)" % a
        return "%s = %s:%s(%s)" % (self.slot(), a, m, self.stream_opts())

    def maybe(self, s, p=0.4):
        if s.strip(", ") == "":
            return ""
        return s if self.chance(p) else ""

    def math_statement(self):
        p = self.r.random()
        out_opts = lambda: self.opts({"out": self.arr, "stream": self.stream})
        if p < 0.35:
            op = self.choice(BINARY)
            if self.chance(0.5):
                return "%s = cu.%s(%s, %s%s)" % (self.slot(), op, self.operand(), self.operand(), self.maybe(", " + out_opts()))
            return "%s = %s:%s(%s%s)" % (self.slot(), self.arr(), op, self.operand(), self.maybe(", " + out_opts()))
        if p < 0.55:
            op = self.choice(UNARY)
            if self.chance(0.5):
                return "%s = cu.%s(%s%s)" % (self.slot(), op, self.operand(), self.maybe(", " + out_opts()))
            return "%s = %s:%s(%s)" % (self.slot(), self.arr(), op, self.maybe(out_opts()))
        if p < 0.75:
            o = self.choice(OPERATORS)
            if self.chance(0.15):
                return "%s = -%s" % (self.slot(), self.arr())
            return "X[4] = %s %s %s" % (self.operand(), o, self.operand())
        if p < 0.85:
            return "%s = cu.where(%s, %s, %s%s)" % (self.slot(), self.operand(), self.operand(), self.operand(), self.maybe(", " + out_opts()))
        ropts = self.opts({"axis": lambda: self.choice(["1", "2", "-1", "0", "3", "9", "0/0", "1.5", "{1, 2}", "math.mininteger"]),
                           "keepdims": lambda: self.choice(["true", "false", "1"]),
                           "out": self.arr, "stream": self.stream})
        op = self.choice(REDUCE)
        if self.chance(0.5):
            return "%s = cu.%s(%s, %s)" % (self.slot(), op, self.arr(), ropts)
        return "%s = %s:%s(%s)" % (self.slot(), self.arr(), op, ropts)

    def linalg_statement(self):
        mopts = self.opts({"out": self.arr, "alpha": self.scalar, "beta": self.scalar,
                           "ta": lambda: self.choice(["true", "false"]), "tb": lambda: self.choice(["true", "false"]),
                           "tf32": lambda: self.choice(["true", "false"]), "stream": self.stream})
        if self.chance(0.6):
            return "%s = cu.matmul(%s, %s, %s)" % (self.slot(), self.arr(), self.arr(), mopts)
        return "%s = cu.dot(%s, %s, %s)" % (self.slot(), self.arr(), self.arr(), self.opts({"out": self.arr, "stream": self.stream}))

    def copy_statement(self):
        return "cu.copy(%s, %s%s)" % (self.arr(), self.arr(), self.maybe(", " + self.stream_opts()))

    def random_statement(self):
        p = self.r.random()
        if p < 0.2:
            return "cu.seed(%s)" % self.choice([self.number(), "2^64", '"7"', "nil", "-1"])
        f = self.choice(["rand", "randn"])
        ropts = self.opts({"dtype": self.dtype, "seed": self.number, "out": self.arr, "stream": self.stream})
        return "%s = cu.%s(%s%s)" % (self.slot(), f, self.shape(), self.maybe(", " + ropts, 0.6))

    def stream_statement(self):
        p = self.r.random()
        if p < 0.2:
            return "S[%d] = cu.stream(%s)" % (self.small(1, 3), self.opts({"priority": lambda: self.choice(['"high"', '"normal"', '"low"', '"urgent"', "1", "nil"])}))
        if p < 0.35:
            return "X[5] = cu.use_stream(%s)" % self.stream()
        if p < 0.45:
            return "do local sc <close> = cu.use_stream(%s); %s end" % (self.stream(), self.array_statement())
        if p < 0.5:
            return "X[5]:close()" if self.chance(0.5) else "getmetatable(X[5]).__close(X[5])"
        if p < 0.6:
            return "E[%d] = cu.event(%s)" % (self.small(1, 2), self.opts({"timing": lambda: self.choice(["true", "false", "1"])}))
        if p < 0.75:
            return "X[6] = E[%d]:%s(%s)" % (self.small(1, 2), self.choice(EVENT_METHODS), self.choice(["", "S[1]", "E[1]", "E[2]", "A[1]", "5"]))
        if p < 0.9:
            return "X[6] = %s:%s(%s)" % (self.stream(), self.choice(STREAM_METHODS), self.choice(["", "E[1]", "S[2]", "A[1]", "5", "S[1]"]))
        return self.choice(["cu.sync()", "X[7] = cu.current_stream()", "X[7] = {S[1].device, S[1].priority, S[1].id, E[1].recorded, E[1].timing, E[1].device}"])

    def graph_statement(self):
        p = self.r.random()
        gopts = self.opts({"stream": self.stream, "name": lambda: self.choice(['"g"', "5", '""', "string.rep('n', 10000)"])})
        if p < 0.35:
            return "G[%d] = cu.graph(%s%s)" % (self.small(1, 2), self.func(), self.maybe(", " + gopts))
        if p < 0.75:
            m = self.choice(GRAPH_METHODS)
            if m == "replay":
                args = "%s%s" % (self.choice(["0", "1", "3", "-1", "0/0", "1.5", "1/0", "-2^63", "math.mininteger", "nil", "'2'"]), self.maybe(", " + self.stream()))
            elif m == "launch":
                args = self.maybe(self.stream())
            elif m == "update":
                args = "%s%s" % (self.func(), self.maybe(", {%s}" % self.arr()))
            else:
                args = ""
            return "X[8] = G[%d]:%s(%s)" % (self.small(1, 2), m, args)
        if p < 0.85:
            return "X[8] = {G[1].nodes, G[1].ops, G[1].ledger, G[1].name, G[1].site, G[1].arrays, G[1].bytes, G[1].freed, G[1].launches}"
        # capture misuse: nested captures, a graph launched or freed inside its own capture
        return self.choice(["G[1] = cu.graph(function() G[2] = cu.graph(function() A[1]:fill(1) end) end)",
                            "G[2] = cu.graph(function() G[1]:launch() end)",
                            "G[2] = cu.graph(function() if G[2] then G[2]:free() end A[1]:fill(2) end)",
                            "G[1] = cu.graph(function() cu.bench(function() end, {max_time = 0.01}) end)",
                            "G[1] = cu.graph(function() S[2] = cu.stream(); E[1]:record(); S[2]:wait(E[1]); A[1]:fill(1, {stream = S[2]}) end)",
                            "G[1] = cu.graph(function() A[7] = cu.zeros(4) end); A[7]:free(); G[1]:launch()",
                            "G[1] = cu.graph(function() cu.time(function() end) end)",
                            "G[1] = cu.graph(function() return cu.graph(function() end) end, {stream = S[1]})"])

    def callback_statement(self, depth=0):
        p = self.r.random()
        bopts = lambda: self.opts({
            "name": lambda: self.choice(['"b"', "5"]),
            "warmup": lambda: self.choice(["0", "1", "2", "-1", "0/0", "1e7", "1.5"]),
            "min_samples": lambda: self.choice(["1", "2", "0", "-1", "1e7", "0/0"]),
            "min_time": lambda: self.choice(["0", "0.001", "-1", "0/0", "1/0"]),
            "max_time": lambda: self.choice(["0", "0.01", "0.02", "-1", "0/0"]),
            "noise": lambda: self.choice(["0", "0.5", "-1", "0/0", "1/0"]),
            "cold": lambda: self.choice(["true", "false", "1"]),
            "hot": lambda: self.choice(["true", "false"]),
            "bytes": lambda: self.choice(["1e9", "0", "-1", "0/0", "1/0"]),
            "flops": lambda: self.choice(["1e9", "0", "-1", "0/0"]),
            "stream": self.stream,
            "graph": lambda: self.choice(["true", "false"])})
        if p < 0.3:
            o = bopts()
            if o.startswith("{"):
                # bound the bench's time: a max_time of the nasty values (65504 s...) is a legitimate
                # long bench, so the last max_time (the one that counts) is a short one
                o = "{min_time = 0.001, " + o[1:-1] + (", " if len(o) > 2 else "") + "max_time = %s}" % self.choice(["0.02", "0.01", "0", "-1", "0/0"])
            else:
                o = "{max_time = 0.02, min_time = 0.001}"
            return "X[9] = cu.bench(%s, %s)" % (self.func(depth), o)
        if p < 0.45:
            axes = self.choice(["{{'n', {1, 2}}}", "{n = {1, 2}, m = {'a'}}", "{}", "{{'n', {}}}", "{n = 5}",
                                "{{'n', {0/0, 1/0}}}", "{{1, {1}}}", "{{'n', {1, 2}}, {'n', {3}}}"])
            extra = self.choice(["", ", order = {'n'}", ", order = {'zz'}", ", name = 5", ", json = 5",
                                 ", plot = 5", ", distribute = true", ", csv = {}"])
            return "X[10] = cu.sweep{axes = %s, quiet = true, run = %s%s}" % (axes, self.func(depth, "p"), extra)
        if p < 0.55:
            return "X[11] = cu.time(%s%s)" % (self.func(depth), self.maybe(", " + self.stream_opts()))
        if p < 0.62:
            return "X[12] = cu.ledger(%s)" % self.choice([self.func(depth), "", "5", "nil"])
        if p < 0.7:
            return "X[13] = cu.strict(%s, %s)" % (self.func(depth), self.arr())
        if p < 0.77:
            return "X[14] = cu.range(%s, %s)" % (self.choice(['"r"', "5", "nil", "string.rep('r', 5000)"]), self.func(depth))
        if p < 0.88:
            # the same, run inside a coroutine (yields cross C calls) and resumed a few times
            inner = self.callback_statement(depth + 1) if depth < 1 else self.array_statement()
            return ("local co = coroutine.create(function() %s end) for _ = 1, 3 do local ok, e = coroutine.resume(co) if not ok then print('C' .. ID .. ' ' .. errtext(e):sub(1, 200)) break end end" % inner)
        # finalizers that misbehave
        body = self.fn_body(depth)
        return "setmetatable({}, {__gc = function() %s end}) %s" % (body, self.choice(["collectgarbage()", "", "collectgarbage('step')"]))

    def lifetime_statement(self):
        p = self.r.random()
        if p < 0.25:
            # runs when the state closes at exit, after FUZZ-DONE
            return "KEEP[#KEEP + 1] = setmetatable({}, {__gc = function() %s end})" % self.fn_body(1)
        if p < 0.45:
            return "do local t <close> = %s; %s end" % (self.choice(["cu.zeros(3)", "A[1]", "A[4]", "cu.use_stream(S[2])", "cu.host.ones(2)"]),
                                                       self.array_statement())
        if p < 0.6:
            return "X[25] = %s[%s]" % (self.arr(), self.choice(["'nope'", "true", "1.5", "{}", "0/0", "-0.0", "math.mininteger", "'free'", "'__gc'", "'shape'", "2^53"]))
        if p < 0.7:
            return "%s[%s] = %s" % (self.arr(), self.choice(["'shape'", "'x'", "1.5", "true", "-1", "math.maxinteger"]), self.operand())
        if p < 0.85:
            return "X[26] = %s" % self.choice(["cu.use_device(%s)" % self.choice(["0", "1", "2", "-1", "0.5"]),
                                               "%s:to_device(%s)" % (self.arr(), self.choice(["0", "1", "2"])),
                                               "cu.device(%s)" % self.choice(["0", "1", "-1", "2^40"]),
                                               "cu.copy(A[%d], A[%d]:to_device(1))" % (self.small(1, POOL), self.small(1, POOL)),
                                               "(A[%d]:to_device(1) + A[%d])" % (self.small(1, POOL), self.small(1, POOL)),
                                               "(function() local d <close> = cu.use_device(1) A[%d] = cu.ones(3) return A[%d] + 1 end)()" % (self.small(1, POOL), self.small(1, POOL))])
        return "X[27] = %s" % self.choice(["cu.trace.start() for i = 1, 3 do A[1]:fill(i) end cu.trace.stop('t.json')",
                                           "(function() local r = cu.sweep{axes = {{'n', {1, 2}}}, quiet = true, run = function(p) return cu.bench(function() A[3]:fill(p.n) end, {max_time = 0.01, min_time = 0.001}) end} r:write_json('s.json') r:write_csv('s.csv') return r:json() .. r:csv() end)()",
                                           "cu.sweep{axes = {n = {1, 2}}, quiet = true, json = 's.json', csv = 's.csv', run = function(p) if p.n == 2 then error('x') end return {v = p.n, t = {1, 2}} end}",
                                           "tostring(cu.ledger(function() A[1]:fill(1) end) - cu.ledger())",
                                           "tostring(X[9])", "X[9] and X[9]:json(2)"])

    def misc_statement(self):
        p = self.r.random()
        if p < 0.1:
            return "X[15] = cu.json.encode(%s%s)" % (self.choice(["{1, 2, 0/0}", "{a = 1/0}", "X", "A", "{[1] = 1, [3] = 3}", "{[0/0 ~= 0/0 and 1 or 2] = 1}",
                                                                  "(function() local t = {} t[1] = t return t end)()", "cu.json.null", "{f = print}",
                                                                  "string.rep('[', 100000)", "{x = cu.complex(1)}", "{A[1]}", "-0.0", "math.mininteger"]),
                                                     self.maybe(", " + self.opts({"indent": lambda: self.choice(["2", "-1", "17", "0/0", "1.5"])})))
        if p < 0.2:
            return "X[16] = cu.json.decode(%s)" % self.choice(['"[1, 2"', '"{}"', 'string.rep("[", 100000)', '"1e999"', '"-0"', '"\\"\\\\ud800\\""',
                                                                '"[1,2,3]"', '"{\\"a\\": null}"', "5", "nil", '"NaN"', '"\\0"', '"123456789012345678901234567890"'])
        if p < 0.3:
            return "X[17] = cu.compile(%s%s)" % (self.choice(['"__global__ void k(float* x) { x[0] = 1; }"', '"not c++ at all {"', '""', "5", "nil",
                                                            'string.rep("__global__ ", 1000)', '"__global__ void k() { while (1); }"',
                                                            '"extern \\"C\\" __global__ void k(int n) { asm(\\"trap;\\"); }"']),
                                                 self.maybe(", " + self.opts({"name": lambda: '"k.cu"', "options": lambda: self.choice(['{"-bogus"}', '"-O3"', "{5}"]),
                                                                              "include_paths": lambda: self.choice(['"/nonexistent"', "{}"]),
                                                                              "name_expressions": lambda: self.choice(['{"k<float>"}', '"x"']),
                                                                              "cache": lambda: self.choice(["false", "true"])})))
        if p < 0.37:
            return "K[1] = cu.elementwise(%s, %s%s)" % (self.choice(['"f32 x -> f32 y"', '"x -> y"', '""', '"f32 x, f32 x -> f32 y"', "5", '"T x -> T y"', '"f99 x -> f32 y"']),
                                                       self.choice(['"y = x * 2"', '""', "nil", '"}"']),
                                                       self.maybe(", {name = 'k'}"))
        if p < 0.42:
            return "K[2] = cu.reduction(%s, %s)" % (self.choice(['"f32 x -> f32 y"', '"x"', "5"]),
                                                   self.choice(["{reduce = 'a + b', identity = 0}", "{}", "{reduce = 5}", "{identity = 0/0, reduce = 'a'}", "nil"]))
        if p < 0.47:
            return "X[18] = K[%d](%s, %s)" % (self.small(1, 2), self.arr(), self.opts({"out": self.arr, "stream": self.stream, "axis": lambda: "1"}))
        if p < 0.55:
            return "X[19] = %s" % self.choice(["cu.devices()", "cu.device(%s)" % self.size(), "cu.use_device(%s)" % self.size(),
                                               "cu.backend", "cu.version", "cu.error_kind(%s)" % self.scalar(), "cu.clock(%s)" % self.opts({"warn": lambda: "false"}),
                                               "cu.sleep(%s)" % self.choice(["0", "1", "-1", "0/0", "1/0", "-1/0", "1e-9", "2^63", '"1"']),
                                               "cu.mpi.available()", "cu.mpi.initialized()", "cu.nccl.available()", "cu.nccl.version()",
                                               "cu.nccl.comm(%s)" % self.choice(["{0}", "{0, 0}", "{}", "5", "{-1}"]),
                                               "cu.help(%s, {text = true})" % self.choice(["cu.add", "A[1]", "'cu.zeros'", "5", "nil", "'nope'", "cu"]),
                                               "cu.trace.recording()"])
        if p < 0.65:
            return "X[20] = %s" % self.choice(["cu.trace.start(%s)" % self.opts({"limit": lambda: self.choice(["0", "1", "-1", "0/0", "10"])}),
                                               "cu.trace.stop(%s)" % self.choice(["", "'trace.json'", "5", "'/nonexistent/x.json'", "'.'"]),
                                               "cu.trace.summary(%s)" % self.opts({"quiet": lambda: "true"})])
        if p < 0.72:
            return self.metamethod_statement()
        if p < 0.8:
            return self.wrong_self_statement()
        if p < 0.88:
            return "X[21] = cu.complex(%s, %s) %s %s" % (self.number(), self.number(), self.choice(["+", "-", "*", "/", "^", "=="]), self.scalar())
        if p < 0.93:
            return "X[22] = cu.plot(%s, %s)" % (self.choice(["{}", "{{x = 1, y = 2}}", "5", "X[10] and X[10].rows", "{{x = 0/0, y = 1/0}}"]),
                                                self.opts({"x": lambda: "'x'", "y": lambda: "'y'", "file": lambda: self.choice(["'p.svg'", "'/nonexistent/p.png'", "'p.txt'"])}))
        return "X[23] = X[10] and {X[10]:json(), X[10]:csv()} or X[9] and X[9]:json(%s)" % self.choice(["", "2", "-1", "'x'"])

    def mpi_statement(self):
        """cu.mpi in a job of one process (a receive only of what was sent: anything else waits)."""
        v = self.choice(["A[%d]" % self.small(1, POOL), "{1, 0/0, 'x', {true}}", "cu.json.null", "5", "nil",
                         "{A[1], A[2]}", "(function() local t = {} t.t = t return t end)()", "string.rep('x', 1e5)",
                         "{[1.5] = 1}", "print", "cu.complex(1, 2)", "A[4]"])
        root = self.choice(["0", "1", "-1", "0/0", "nil", "'0'", "1.5"])
        op = self.choice(["'sum'", "'max'", "'min'", "'prod'", "'avg'", "5", "nil"])
        return "X[29] = %s" % self.choice([
            "{cu.mpi.rank, cu.mpi.size, cu.mpi.local_rank, cu.mpi.available(), cu.mpi.initialized(), cu.mpi.cuda_aware()}",
            "cu.mpi.barrier()",
            "cu.mpi.bcast(%s, %s%s)" % (v, root, self.maybe(", {out = %s}" % self.arr())),
            "cu.mpi.allreduce(%s, {op = %s%s})" % (v, op, self.maybe(", out = %s" % self.arr())),
            "cu.mpi.gather(%s, %s)" % (v, root),
            # a send to itself waits for the receive past MPI's eager limit: small values only
            "(function() local tag = %d cu.mpi.send(%s, 0, tag) return cu.mpi.recv(0, tag%s) end)()" % (
                self.small(0, 5), self.choice(["{1, 0/0, 'x', {true}}", "5", "nil", "cu.zeros(3, 'i8')", "cu.host.ones({2, 2})",
                                               "cu.zeros({0, 3})", "cu.json.null", "cu.zeros(2, 'c128')"]),
                self.maybe(", {out = %s}" % self.arr())),
            "cu.mpi.send(%s, %s, %s)" % (v, self.choice(["1", "-1", "0/0", "'x'"]), self.choice(["1", "-1", "2^40", "nil"])),
        ])

    def metamethod_statement(self):
        """Metamethods called by hand, on their own type or another (a finalizer run twice...)."""
        holders = ["A[1]", "A[4]", "A[5]", "S[1]", "S[2]", "E[1]", "G[1]", "X[5]", "K[1]", "cu.complex(1, 2)",
                   "cu.use_device(0)", "X[9]", "X[10]", "cu.ledger()"]
        mm = self.choice(["__gc", "__close", "__tostring", "__len", "__index", "__newindex", "__unm", "__add",
                          "__call", "__concat", "__eq", "__name"])
        args = ", ".join(self.choice(holders + ["5", "nil", "{}", "'k'", "1"]) for _ in range(self.small(0, 3)))
        return "X[28] = (function() local mt = getmetatable(%s) local f = type(mt) == 'table' and rawget(mt, '%s') if type(f) == 'function' then return f(%s) end end)()" % (
            self.choice(holders), mm, args)

    def wrong_self_statement(self):
        holders = {"A[1]": METHODS, "S[1]": STREAM_METHODS, "E[1]": EVENT_METHODS, "G[1]": GRAPH_METHODS}
        h = self.choice(list(holders))
        m = self.choice(holders[h])
        wrong = self.choice(["A[1]", "A[5]", "S[1]", "E[1]", "G[1]", "K[1]", "X[10]", "X[9]", "5", "nil", "{}",
                             "cu.complex(1)", "io.stdout", "X[5]", '"s"', "cu.json.null"])
        if self.chance(0.5):
            return "X[24] = method(%s, '%s')(%s, %s)" % (h, m, wrong, self.operand())
        return "X[24] = %s.%s(%s)" % (h, m, wrong)

    def array_statement(self):
        p = self.r.random()
        if p < 0.2:
            return self.create_statement()
        if p < 0.35:
            return self.view_statement()
        if p < 0.5:
            return self.method_statement()
        if p < 0.75:
            return self.math_statement()
        if p < 0.83:
            return self.linalg_statement()
        if p < 0.9:
            return self.copy_statement()
        return self.random_statement()

    # -- oracles ------------------------------------------------------------------------------
    def oracle_statement(self):
        f = self.choice([self.o_binary, self.o_int_identity, self.o_reduce, self.o_astype, self.o_views,
                         self.o_matmul, self.o_arange, self.o_index, self.o_fill, self.o_reduce_axis,
                         self.o_int_div, self.o_nan_compare, self.o_broadcast, self.o_half, self.o_complex,
                         self.o_empty_reduce, self.o_reduce3, self.o_streams])
        return f()

    def o_binary(self):
        n = self.small(0, 7)
        xs, ys = self.lua_values(n, "float"), self.lua_values(n, "float")
        if self.chance(0.3) and n:
            xs[self.small(0, n - 1)] = self.choice(["0/0", "1/0", "-1/0", "-0.0"])
        dt = self.choice(["f64", "f32"])
        op, lop = self.choice([("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/")])
        rnd = "f32" if dt == "f32" else ""
        return ("local xs, ys = %s, %s local a, b = cu.array(xs, '%s'), cu.array(ys, '%s') "
                "local want = {} for i = 1, #xs do want[i] = %s(%s(xs[i]) %s %s(ys[i])) end "
                "if #xs > 0 then check_list(ID, '%s %s', cu.%s(a, b):totable(), want, same) end "
                "local hb = cu.host.array(xs, '%s') "
                "if #xs > 0 then check_list(ID, 'host %s', (hb %s b):totable(), want, same) end"
                % (self.table(xs), self.table(ys), dt, dt, rnd, rnd, lop, rnd, dt, op, op, dt, op, lop))

    def o_int_identity(self):
        n = self.small(1, 8)
        dt, bits, signed = self.choice([("i32", 32, True), ("i64", 64, True), ("i16", 16, True), ("i8", 8, True),
                                        ("u8", 8, False), ("u32", 32, False)])
        lim = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        lo = -lim - 1 if signed else 0
        xs = [self.r.choice([self.r.randint(lo, lim), lo, lim, 0, 1]) for _ in range(n)]
        ys = [self.r.choice([self.r.randint(lo, lim), lo, lim, 0, -1 if signed else 1]) for _ in range(n)]
        return ("local xs, ys = %s, %s local a, b = cu.array(xs, '%s'), cu.array(ys, '%s') "
                "check_list(ID, '(a+b)-b', ((a + b) - b):totable(), xs, same) "
                "local want = {} for i = 1, #xs do want[i] = wrap(xs[i] + ys[i], %d, %s) end "
                "check_list(ID, 'a+b wraps', (a + b):totable(), want, same) "
                "want = {} for i = 1, #xs do want[i] = wrap(xs[i] * ys[i], %d, %s) end "
                "check_list(ID, 'a*b wraps', (a * b):totable(), want, same) "
                "local s = 0 for i = 1, #xs do s = s + xs[i] end "
                "check_list(ID, 'sum', {a:sum():item()}, {s}, same)"
                % (self.table(xs), self.table(ys), dt, dt, bits, "true" if signed else "false",
                   bits, "true" if signed else "false"))

    def o_reduce(self):
        n = self.small(1, 9)
        xs = self.lua_values(n, "float")
        nan = self.chance(0.25)
        if nan:
            xs[self.small(0, n - 1)] = "0/0"
        return ("local xs = %s local a = cu.array(xs, 'f64') "
                "local mx, mn, imx, imn, s = -1/0, 1/0, 1, 1, 0 "
                "for i = 1, #xs do local v = xs[i] s = s + v "
                "if v ~= v then if mx == mx then mx = v imx = i end if mn == mn then mn = v imn = i end "
                "else if mx == mx and v > mx then mx = v imx = i end if mn == mn and v < mn then mn = v imn = i end end end "
                "check_list(ID, 'max', {a:max():item()}, {mx}, same) "
                "check_list(ID, 'min', {a:min():item()}, {mn}, same) "
                "check_list(ID, 'argmax', {a:argmax():item()}, {imx}, same) "
                "check_list(ID, 'argmin', {cu.argmin(a):item()}, {imn}, same) "
                "check_list(ID, 'sum', {a:sum():item()}, {s}, function(x, y) return near(x, y, 1e-12) end) "
                "check_list(ID, 'mean', {a:mean():item()}, {s / #xs}, function(x, y) return near(x, y, 1e-12) end)"
                % self.table(xs))

    def o_astype(self):
        n = self.small(1, 8)
        xs = [self.choice(["0/0", "1/0", "-1/0", "-0.0", "2^31", "-2^31 - 1", "2^63", "-2^64", "3.9", "-3.9",
                           "255.5", "256", "-1", "0.5", "1e10", "65504", "-129"]) for _ in range(n)]
        dt, bits, signed = self.choice([("i32", 32, True), ("i64", 64, True), ("i16", 16, True), ("i8", 8, True),
                                        ("u8", 8, False), ("u32", 32, False)])
        if signed:
            lo_f, hi_f = "-(2.0^%d)" % (bits - 1), "2.0^%d" % (bits - 1)
            lo_i = "math.mininteger" if bits == 64 else str(-(1 << (bits - 1)))
            hi_i = "math.maxinteger" if bits == 64 else str((1 << (bits - 1)) - 1)
        else:
            lo_f, hi_f, lo_i, hi_i = "0", "2.0^%d" % bits, "0", str((1 << bits) - 1)
        return ("local xs = %s local a = cu.array(xs, 'f64') "
                "local want = {} for i = 1, #xs do local v = xs[i] "
                "if v ~= v then want[i] = 0 elseif v >= %s then want[i] = %s elseif v <= %s then want[i] = %s "
                "else want[i] = math.tointeger(v < 0 and math.ceil(v) or math.floor(v)) end end "
                "check_list(ID, 'f64->%s', a:astype('%s'):totable(), want, same) "
                "local wb = {} for i = 1, #xs do wb[i] = xs[i] ~= 0 end "
                "check_list(ID, 'f64->bool', a:astype('bool'):totable(), wb, same) "
                "local ints = a:astype('i64'):totable() local wn = {} for i = 1, #ints do wn[i] = wrap(ints[i], %d, %s) end "
                "check_list(ID, 'i64->%s', a:astype('i64'):astype('%s'):totable(), wn, same)"
                % (self.table(xs), hi_f, hi_i, lo_f, lo_i, dt, dt, bits, "true" if signed else "false", dt, dt))

    def o_views(self):
        r, c = self.small(0, 5), self.small(0, 5)
        start = self.small(1, max(c, 1))
        ln = self.small(0, max(c - start + 1, 0))
        return ("local r, c = %d, %d local t = {} for i = 1, r do t[i] = {} for j = 1, c do t[i][j] = i * 100 + j end end "
                "local a = cu.array(r > 0 and c > 0 and t or {}, 'f64') if r == 0 or c == 0 then return end "
                "local want = {} for j = 1, c do for i = 1, r do want[#want + 1] = t[i][j] end end "
                "check_list(ID, 'transpose', a:transpose():totable(), want, same) "
                "check_list(ID, 'transpose contiguous', a:transpose():contiguous():totable(), want, same) "
                "check_list(ID, 'transpose clone', a:transpose():clone():totable(), want, same) "
                "want = {} for i = 1, r do for j = %d, %d do want[#want + 1] = t[i][j] end end "
                "if %d > 0 then check_list(ID, 'narrow', a:narrow(2, %d, %d):totable(), want, same) "
                "check_list(ID, 'narrow*2', (a:narrow(2, %d, %d) * 2):totable(), (function() local w = {} for k, v in ipairs(want) do w[k] = 2 * v end return w end)(), same) end "
                "local flatw = flat(t) check_list(ID, 'reshape', a:reshape(-1):totable(), flatw, same) "
                "check_list(ID, 'transpose reshape', a:transpose():reshape(c * r):totable(), (function() local w = {} for j = 1, c do for i = 1, r do w[#w + 1] = t[i][j] end end return w end)(), same)"
                % (r, c, start, start + ln - 1, ln, start, ln, start, ln))

    def o_matmul(self):
        m, k, n = self.small(0, 4), self.small(0, 4), self.small(0, 4)
        dt = self.choice(["f64", "f32", "i32", "i64"])
        return ("local m, k, n = %d, %d, %d local A0, B0 = {}, {} "
                "for i = 1, m do A0[i] = {} for j = 1, k do A0[i][j] = (i * 7 + j * 3) %% 11 - 5 end end "
                "for i = 1, k do B0[i] = {} for j = 1, n do B0[i][j] = (i * 5 + j) %% 7 - 3 end end "
                "if m == 0 or k == 0 or n == 0 then "
                "local c = cu.matmul(cu.zeros({m, k}, '%s'), cu.zeros({k, n}, '%s')) "
                "check_list(ID, 'matmul shape', c.shape, {m, n}, same) "
                "if m * n > 0 then check_list(ID, 'matmul k=0', c:totable(), (function() local w = {} for i = 1, m * n do w[i] = 0 end return w end)(), same) end return end "
                "local a, b = cu.array(A0, '%s'), cu.array(B0, '%s') "
                "local want = {} for i = 1, m do for j = 1, n do local s = 0 for l = 1, k do s = s + A0[i][l] * B0[l][j] end want[#want + 1] = s end end "
                "check_list(ID, 'matmul', cu.matmul(a, b):totable(), want, same) "
                "check_list(ID, 'matmul ta', cu.matmul(a:transpose():contiguous(), b, {ta = true}):totable(), want, same) "
                "check_list(ID, 'matmul view', cu.matmul(a:transpose():contiguous():transpose(), b):totable(), want, same)"
                % (m, k, n, dt, dt, dt, dt))

    def o_arange(self):
        start, stop, step = self.small(-10, 10), self.small(-10, 10), self.choice([1, 2, 3, -1, -2])
        dt = self.choice(["i32", "i64", "f64"])
        return ("local want = {} for v = %d, %d - (%d > 0 and 1 or -1), %d do want[#want + 1] = v end "
                "check_list(ID, 'arange', cu.arange(%d, %d, %d, '%s'):totable(), want, same) "
                "local n = %d if n >= 0 then local w = {} for i = 0, n - 1 do w[#w + 1] = i end check_list(ID, 'arange n', cu.arange(n, '%s'):totable(), w, same) end"
                % (start, stop, step, step, start, stop, step, dt, stop, dt))

    def o_index(self):
        n = self.small(1, 6)
        xs = self.lua_values(n, "int")
        i = self.small(-n, n)
        if i == 0:
            i = 1
        return ("local xs = %s local a = cu.array(xs, 'i32') local i = %d "
                "local want = xs[i > 0 and i or #xs + 1 + i] "
                "check_list(ID, 'a[i]', {a[i]}, {want}, same) "
                "a[i] = 77 local w2 = {} for k, v in ipairs(xs) do w2[k] = v end w2[i > 0 and i or #xs + 1 + i] = 77 "
                "check_list(ID, 'a[i] = 77', a:totable(), w2, same) check_list(ID, '#a', {#a}, {#xs}, same)"
                % (self.table(xs), i))

    def o_fill(self):
        shape = [self.small(0, 3) for _ in range(self.small(0, 3))]
        dt = self.choice(["f32", "f64", "i32", "i8", "u8", "bool", "i64"])
        v = {"bool": "true"}.get(dt, str(self.small(-5, 100) if dt != "u8" else self.small(0, 255)))
        if dt == "i8":
            v = str(self.small(-128, 127))
        total = 1
        for d in shape:
            total *= d
        return ("local a = cu.full({%s}, %s, '%s') local want = {} for i = 1, %d do want[i] = %s end "
                "check_list(ID, 'full', a:totable(), want, same) "
                "a:fill(%s) check_list(ID, 'fill', a:totable(), want, same) "
                "check_list(ID, 'size', {a.size, a.nbytes // math.max(a.size, 1) > 0 or a.size == 0}, {%d, true}, same)"
                % (", ".join(map(str, shape)), v, dt, total, v, v, total))

    def o_reduce_axis(self):
        r, c = self.small(1, 4), self.small(1, 4)
        ax = self.choice([1, 2, -1, -2])
        return ("local r, c, ax = %d, %d, %d local t = {} for i = 1, r do t[i] = {} for j = 1, c do t[i][j] = (i * 3 + j * 5) %% 13 end end "
                "local a = cu.array(t, 'i32') local want = {} local axp = ax < 0 and 3 + ax or ax "
                "if axp == 1 then for j = 1, c do local s = 0 for i = 1, r do s = s + t[i][j] end want[j] = s end "
                "else for i = 1, r do local s = 0 for j = 1, c do s = s + t[i][j] end want[i] = s end end "
                "check_list(ID, 'sum axis', a:sum{axis = ax}:totable(), want, same) "
                "check_list(ID, 'sum axis keepdims', a:sum{axis = ax, keepdims = true}:totable(), want, same) "
                "local mx = {} if axp == 1 then for j = 1, c do local m = -1 for i = 1, r do m = math.max(m, t[i][j]) end mx[j] = m end "
                "else for i = 1, r do local m = -1 for j = 1, c do m = math.max(m, t[i][j]) end mx[i] = m end end "
                "check_list(ID, 'max axis', a:max{axis = ax}:totable(), mx, same)"
                % (r, c, ax))

    def o_streams(self):
        """Work handed between streams through events; the sums must match."""
        n = self.choice([1, 7, 64, 1000, 4096])
        iters = self.small(2, 12)
        dt = self.choice(["f64", "i64", "i32"])
        free = self.choice(["b:free()", "", "b = nil collectgarbage('step')", "cu.sync()"])
        return ("local n = %d for i = 1, %d do local s1, s2 = S[i %% 3 + 1], S[(i + 1) %% 3 + 1] "
                "local b = cu.full(n, i, '%s', {stream = s1}) local e = cu.event{timing = false} e:record(s1) s2:wait(e) "
                "local c = cu.mul(b, 2, {stream = s2}) %s local r = c:sum{stream = s2} "
                "local e2 = cu.event() e2:record(s2) s1:wait(e2) local d = cu.add(c, 1, {stream = s1}) "
                "check_list(ID, 'stream sum', {r:item(), d:sum():item()}, {2 * i * n, (2 * i + 1) * n}, same) end"
                % (n, iters, dt, free))

    def o_int_div(self):
        n = self.small(1, 6)
        dt, bits = self.choice([("i32", 32), ("i64", 64), ("i8", 8), ("i16", 16)])
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        xs = [self.r.choice([self.r.randint(lo, hi), lo, hi, self.small(-20, 20)]) for _ in range(n)]
        ys = [self.r.choice([self.r.randint(lo, hi), -1, 1, self.small(1, 7), -self.small(1, 7)]) for _ in range(n)]
        ys = [y if y != 0 else 3 for y in ys]
        e = self.small(0, 5)
        return ("local xs, ys = %s, %s local a, b = cu.array(xs, '%s'), cu.array(ys, '%s') "
                "local wq, wr, wp, wn, wa = {}, {}, {}, {}, {} for i = 1, #xs do wq[i] = wrap(xs[i] // ys[i], %d, true) wr[i] = xs[i] %% ys[i] "
                "local p = 1 for _ = 1, %d do p = p * xs[i] end wp[i] = wrap(p, %d, true) wn[i] = wrap(-xs[i], %d, true) wa[i] = wrap(xs[i] < 0 and -xs[i] or xs[i], %d, true) end "
                "check_list(ID, '//', (a // b):totable(), wq, same) check_list(ID, '%%', (a %% b):totable(), wr, same) "
                "check_list(ID, '^%d', (a ^ %d):totable(), wp, same) check_list(ID, 'neg', (-a):totable(), wn, same) "
                "check_list(ID, 'abs', a:abs():totable(), wa, same)"
                % (self.table(xs), self.table(ys), dt, dt, bits, e, bits, bits, bits, e, e))

    def o_nan_compare(self):
        n = self.small(1, 6)
        pool = ["0/0", "1/0", "-1/0", "-0.0", "0", "1", "-2.5", "3"]
        xs = [self.choice(pool) for _ in range(n)]
        ys = [self.choice(pool) for _ in range(n)]
        dt = self.choice(["f32", "f64", "f16", "bf16"])
        return ("local xs, ys = %s, %s local a, b = cu.array(xs, '%s'), cu.array(ys, '%s') "
                "local weq, wlt, wge, wmax, wmin = {}, {}, {}, {}, {} for i = 1, #xs do local x, y = xs[i], ys[i] "
                "weq[i] = x == y wlt[i] = x < y wge[i] = x >= y "
                "wmax[i] = (x ~= x or y ~= y) and 0/0 or math.max(x, y) wmin[i] = (x ~= x or y ~= y) and 0/0 or math.min(x, y) end "
                "check_list(ID, 'eq', cu.eq(a, b):totable(), weq, same) check_list(ID, 'lt', a:lt(b):totable(), wlt, same) "
                "check_list(ID, 'ge', cu.ge(a, b):totable(), wge, same) "
                "check_list(ID, 'maximum', cu.maximum(a, b):totable(), wmax, function(g, w) return same(g, w) or (g == 0 and w == 0) end) "
                "check_list(ID, 'minimum', cu.minimum(a, b):totable(), wmin, function(g, w) return same(g, w) or (g == 0 and w == 0) end) "
                "check_list(ID, 'ne', cu.ne(a, b):totable(), (function() local w = {} for i = 1, #xs do w[i] = xs[i] ~= ys[i] end return w end)(), same)"
                % (self.table(xs), self.table(ys), dt, dt))

    def o_broadcast(self):
        r, c = self.small(0, 4), self.small(0, 4)
        dt = self.choice(["f64", "i32", "i64", "f32"])
        op, lop = self.choice([("add", "+"), ("sub", "-"), ("mul", "*"), ("maximum", "max")])
        expr = "math.max(x, y)" if lop == "max" else "x %s y" % lop
        return ("local r, c = %d, %d local col, row = {}, {} for i = 1, r do col[i] = {i * 3 - 4} end for j = 1, c do row[j] = j * j - 5 end "
                "if r == 0 or c == 0 then local z = cu.%s(cu.zeros({r, 1}, '%s'), cu.zeros({1, c}, '%s')) check_list(ID, 'broadcast shape', z.shape, {r, c}, same) return end "
                "local a, b = cu.array(col, '%s'), cu.array({row}, '%s') local want = {} "
                "for i = 1, r do for j = 1, c do local x, y = col[i][1], row[j] want[#want + 1] = %s end end "
                "local z = cu.%s(a, b) check_list(ID, 'broadcast shape', z.shape, {r, c}, same) check_list(ID, 'broadcast', z:totable(), want, same) "
                "local w = cu.where(cu.array(col, 'f64'):gt(0), a, b) local ww = {} "
                "for i = 1, r do for j = 1, c do ww[#ww + 1] = col[i][1] > 0 and col[i][1] or row[j] end end check_list(ID, 'where', w:totable(), ww, same)"
                % (r, c, op, dt, dt, dt, dt, expr, op))

    def o_half(self):
        dt = self.choice(["f16", "bf16"])
        vals = ["0", "-0.0", "1", "-2", "0.5", "0.25", "1/0", "-1/0", "256", "-3.5"]
        if dt == "f16":
            vals += ["65504", "2048", "6.103515625e-05", "5.9604644775390625e-08", "1000", "-0.125"]
        else:
            vals += ["3.3895313892515355e+38", "128", "1.1754943508222875e-38", "-96"]
        xs = [self.choice(vals) for _ in range(self.small(1, 6))]
        over = "65520" if dt == "f16" else "3.4e38"
        return ("local xs = %s local a = cu.array(xs, 'f64'):astype('%s') "
                "check_list(ID, '%s roundtrip', a:astype('f64'):totable(), xs, same) "
                "check_list(ID, '%s f32 roundtrip', cu.array(xs, '%s'):astype('f32'):astype('f64'):totable(), xs, same) "
                "check_list(ID, '%s overflow', {cu.array({%s, -%s}, 'f64'):astype('%s'):astype('f64'):totable()}, {1/0, -1/0}, same) "
                "check_list(ID, '%s nan', {cu.array({0/0}, 'f64'):astype('%s'):astype('f64'):item()}, {0/0}, same) "
                "check_list(ID, '%s sum', {a:sum():item()}, {(function() local s = 0 for _, v in ipairs(xs) do s = s + v end return s end)()}, function(g, w) return near(g, w, 1e-2) or (w ~= w and g ~= g) or (math.abs(w) == 1/0 and g ~= g) end)"
                % (self.table(xs), dt, dt, dt, dt, dt, over, over, dt, dt, dt, dt))

    def o_complex(self):
        n = self.small(1, 4)
        re = [self.small(-5, 5) for _ in range(2 * n)]
        dt = self.choice(["c64", "c128"])
        return ("local v = %s local n = %d local za, zb = {}, {} "
                "for i = 1, n do za[i] = cu.complex(v[i], v[n + i]) zb[i] = cu.complex(v[n + i] + 1, v[i] - 2) end "
                "local a, b = cu.array(za, '%s'), cu.array(zb, '%s') "
                "local p, s = (a * b):totable(), (a + b):totable() "
                "for i = 1, n do local x, y = za[i], zb[i] local wr, wi = x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re "
                "if p[i].re ~= wr or p[i].im ~= wi then MISMATCH(ID, 'complex *', tostring(p[i]), wr .. '+' .. wi .. 'j') end "
                "if s[i].re ~= x.re + y.re or s[i].im ~= x.im + y.im then MISMATCH(ID, 'complex +', tostring(s[i]), tostring(x + y)) end end "
                "local ab = a:abs():totable() for i = 1, n do if not near(ab[i], math.sqrt(za[i].re ^ 2 + za[i].im ^ 2), 1e-6) then MISMATCH(ID, 'complex abs', ab[i], za[i]:abs()) end end "
                "check_list(ID, 'real', a:real():totable(), (function() local w = {} for i = 1, n do w[i] = za[i].re end return w end)(), same) "
                "check_list(ID, 'imag', cu.imag(a):totable(), (function() local w = {} for i = 1, n do w[i] = za[i].im end return w end)(), same)"
                % (self.table(re), n, dt, dt))

    def o_empty_reduce(self):
        shape = self.choice(["{0}", "{3, 0}", "{0, 4}", "{2, 0, 3}"])
        dt = self.choice(["f32", "f64", "i32", "i64", "u8", "bool"])
        return ("local a = cu.zeros(%s, '%s') "
                "check_list(ID, 'empty sum', {a:sum():item()}, {0}, same) check_list(ID, 'empty prod', {a:prod():item()}, {1}, same) "
                "check_list(ID, 'empty mean', {a:mean():item()}, {0/0}, same) check_list(ID, 'empty norm', {a:norm():item()}, {0}, same) "
                "if pcall(a.max, a) then MISMATCH(ID, 'empty max', 'a value', 'an error') end "
                "if pcall(a.argmin, a) then MISMATCH(ID, 'empty argmin', 'a value', 'an error') end "
                "local s = a:sum{axis = -1, keepdims = true} local want = a.shape want[#want] = 1 check_list(ID, 'empty sum axis shape', s.shape, want, same) "
                "check_list(ID, 'empty sum axis', s:totable(), (function() local w = {} for i = 1, s.size do w[i] = 0 end return w end)(), same)"
                % (shape, dt))

    def o_reduce3(self):
        d = [self.small(1, 3) for _ in range(3)]
        ax = self.choice([1, 2, 3, -1, -3])
        op = self.choice(["sum", "prod", "max", "min", "argmax", "argmin"])
        return ("local d, ax, op = {%d, %d, %d}, %d, '%s' local axp = ax < 0 and 4 + ax or ax local t = {} "
                "for i = 1, d[1] do t[i] = {} for j = 1, d[2] do t[i][j] = {} for k = 1, d[3] do t[i][j][k] = (i * 7 + j * 5 + k * 3) %% 9 - 4 end end end "
                "local a = cu.array(t, 'i64') local r = a[op](a, {axis = ax, keepdims = true}) "
                "local ws = {d[1], d[2], d[3]} ws[axp] = 1 check_list(ID, op .. ' keepdims shape', r.shape, ws, same) "
                "local want = {} "
                "for i = 1, ws[1] do for j = 1, ws[2] do for k = 1, ws[3] do local acc, best, at = op == 'prod' and 1 or 0, nil, 0 "
                "for m = 1, d[axp] do local ii, jj, kk = i, j, k if axp == 1 then ii = m elseif axp == 2 then jj = m else kk = m end local v = t[ii][jj][kk] "
                "if op == 'sum' then acc = acc + v elseif op == 'prod' then acc = acc * v "
                "elseif (op == 'max' or op == 'argmax') and (best == nil or v > best) then best, at = v, m "
                "elseif (op == 'min' or op == 'argmin') and (best == nil or v < best) then best, at = v, m end end "
                "if op == 'sum' or op == 'prod' then want[#want + 1] = acc elseif op == 'max' or op == 'min' then want[#want + 1] = best else want[#want + 1] = at end end end end "
                "check_list(ID, op .. ' axis', r:totable(), want, same) check_list(ID, op .. ' axis no keepdims', a[op](a, {axis = ax}):totable(), want, same)"
                % (d[0], d[1], d[2], ax, op))

    # -- the program ----------------------------------------------------------------------------
    def statement(self):
        p = self.r.random()
        if p < 0.45:
            return self.array_statement()
        if p < 0.55:
            return self.stream_statement()
        if p < 0.62:
            return self.graph_statement()
        if p < 0.72:
            return self.callback_statement()
        if p < 0.82:
            return self.misc_statement()
        if p < 0.857:
            return self.lifetime_statement()
        if p < 0.86:
            return self.mpi_statement()
        if p < 0.88:
            return self.choice(["collectgarbage()", "cu.sync()", "A[%d] = nil" % self.small(1, POOL), "X = {}"])
        return self.oracle_statement()

    def program(self, count=None):
        if count is None:
            count = self.r.randint(10, 60)
        lines = [PRELUDE % {"seed": self.seed}]
        if self.chance(0.3):
            lines.insert(0, "-- env: CULUA_HOST_DEVICES=%d\n" % self.choice([2, 3]))
        for i in range(1, count + 1):
            lines.append("T(%d, function() %s end)\n" % (i, self.statement()))
        lines.append(EPILOGUE)
        return "".join(lines)


def generate(seed, count=None):
    return Gen(seed).program(count)


if __name__ == "__main__":
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    count = int(sys.argv[2]) if len(sys.argv) > 2 else None
    sys.stdout.write(generate(seed, count))
