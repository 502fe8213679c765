---@meta cu

-- Lua Language Server annotations for the `cu` module of culua (https://luals.github.io).
--
-- This file is a description, not code: its functions are empty stubs. It is never run by culua
-- (running it would replace the real functions); culua embeds its text for cu.help(), which shows
-- the descriptions below. Point LuaLS at the folder holding it (workspace.library).
--
-- Layout, which cu.help() relies on: "-- ## Title" starts a group of the overview; each stub is
-- preceded by its description ("--- text") and annotations ("---@param", "---@return", ...);
-- a type is "---@class cu.Name" followed by "local Name = {}" and its methods
-- "function Name:method() end". Types are written without spaces outside brackets.

-- ## Types

--- An element type. Aliases are accepted too: float32 float64 float16 bfloat16 int8 int16 int32
--- int64 uint8 uint16 uint32 uint64 complex64 complex128 double. A u64 element from 2^63 up reads
--- back into Lua as the nearest float (a Lua integer is signed).
---@alias cu.DType
---| "f32"  # 32-bit float (the default)
---| "f64"  # 64-bit float
---| "f16"  # IEEE half precision (computes in f32)
---| "bf16" # bfloat16 (computes in f32)
---| "i8"
---| "i16"
---| "i32"
---| "i64"
---| "u8"
---| "u16"
---| "u32"
---| "u64"  # elements from 2^63 up read back as floats
---| "bool"
---| "c64"  # complex of two f32
---| "c128" # complex of two f64
---| "float32"
---| "float64"
---| "float16"
---| "bfloat16"
---| "int8"
---| "int16"
---| "int32"
---| "int64"
---| "uint8"
---| "uint16"
---| "uint32"
---| "uint64"
---| "complex64"
---| "complex128"
---| "double"

--- A shape: an integer (1-D) or a table of integers, at most 8 dimensions.
---@alias cu.Shape integer|integer[]

--- A scalar: a Lua number, a boolean or a cu.complex value.
---@alias cu.Scalar number|boolean|cu.Complex

--- An operand of elementwise math: an array or a scalar.
---@alias cu.Operand cu.Array|cu.Scalar

--- Where an array's memory is: on the device, or in pinned (page-locked) or pageable host memory.
---@alias cu.Location "device"|"pinned"|"pageable"

-- ## Devices

--- The `cu` module: CUDA device arrays, streams, events, run-time kernels and measurement. A
--- global in culua (`require "cu"` returns it). Indices visible to Lua are 1-based, device ordinals
--- 0-based; a shape is an integer or a table of integers; the default dtype is "f32". Unknown
--- option names are errors.
---@class cu
---@field backend "cuda"|"host" the backend in use; reading it creates the backend
---@field version string culua's version, such as "0.1.0"
---@field e number Euler's number (the Array API standard's constant)
---@field pi number π (math.pi)
---@field inf number positive infinity (math.huge)
---@field nan number a quiet NaN (0/0)
---@field host cu.host functions that create arrays in host memory
---@field trace cu.trace the timeline recorder
---@field fuse cu.fuse recorded elementwise operations run as generated kernels (docs/fusion.md)
---@field json cu.json JSON text to Lua values and back
---@field nccl cu.nccl NCCL collectives between GPUs
---@field mpi cu.mpi MPI: processes started by mpirun (see docs/mpi.md)
---@field fft cu.fft discrete Fourier transforms (numpy.fft; cuFFT on the GPU, kissfft on the host)
cu = {}

--- The devices of the backend, each {index=, name=, sm_count=, memory=, l2=, cc=, peers=} (cc
--- only on CUDA). Indices are CUDA's ordinals (0-based). The host backend has one device, or
--- CULUA_HOST_DEVICES=N simulated ones (see docs/devices.md). `peers` is keyed by the other devices'
--- indices: `cu.devices()[1].peers[1]` is how device 0 reaches device 1.
---@return cu.DeviceInfo[]
function cu.devices() end

--- Gets the current device, or selects device `i` first (0-based). Work without an explicit stream
--- and new arrays, streams and events go to the current device. A device that does not exist is an
--- error naming the valid range. Prefer `cu.use_device` for a scope.
---@param i? integer the device to select
---@return integer # the current device
function cu.device(i) end

--- Selects device `i` (0-based) until the returned value is closed: `local _ <close> =
--- cu.use_device(1)` makes device 1 current for the rest of the block, and the previous device
--- current again when the block ends, also by an error. New arrays, streams, events and graphs
--- belong to the current device; operations on arrays run on their arrays' device whatever the
--- current one. Closing twice is harmless; the collector never restores (close it). A device that
--- does not exist: "bad argument #1 to 'use_device' (device 5 does not exist (devices are
--- numbered 0..1))".
---@param i integer the device to select
---@return cu.DeviceUse
function cu.use_device(i) end

--- What cu.use_device returns: closing it (`<close>` or :close()) selects `previous` again.
---@class cu.DeviceUse
---@field device integer the device selected
---@field previous integer the device current before, selected again on close
local DeviceUse = {}

--- Selects the previous device again (idempotent; what `<close>` does).
function DeviceUse:close() end

--- Waits until all work queued on every stream of the current device has finished. Counted as an
--- explicit synchronization in cu.ledger().
function cu.sync() end

--- Queues work that keeps a stream busy for `ms` milliseconds; the host does not wait
--- (asynchronous). Useful to show overlap, or to hold later work behind a gate.
---@param ms number milliseconds
---@param opts? cu.StreamOption
function cu.sleep(ms, opts) end

--- The kind of a culua error ("value", "type", "index", "out_of_memory", "released",
--- "unsupported", "device", "fatal", "strict", "interrupted", "capture", "limit"), or nil for any other
--- error value (a string from error("...") or from Lua's own functions).
---@param err any an error value, as pcall returns it
---@return string? kind
function cu.error_kind(err) end

--- The error value culua raises: a table that behaves as the string "file.lua:12: message" it
--- replaces (tostring, print, .., #, string.format("%s"), and the string methods such as
--- err:find(...) and err:match(...)). error(err, 0) raises it again unchanged.
---@class cu.Error
---@field kind string "value", "type", "index", "out_of_memory", "released", "unsupported", "device", "fatal", "strict", "interrupted", "capture" or "limit" (a sandbox limit: docs/sandbox.md)
---@field message string the message without the position: "bad argument #2 to 'empty' (...)", "sum: attempt to use a released array (...)"
---@field where? string the caller's position, "file.lua:12"; absent when unknown
---@field func? string the function's name, when known (always for an argument error)
---@field arg? integer an argument error's argument number

--- What cu.devices() returns for each device.
---@class cu.DeviceInfo
---@field index integer the CUDA ordinal (0-based)
---@field name string the device's name
---@field sm_count integer streaming multiprocessors (CPU threads on the host backend)
---@field memory integer bytes of device memory
---@field l2 integer bytes of L2 cache
---@field cc? string compute capability such as "9.0" (CUDA only)
---@field peers table<integer, cu.PeerLink> how this device reaches each other device, by index

--- How one device reaches another (cu.devices()[i].peers[j]).
---@class cu.PeerLink
---@field access boolean peer access: copies go directly between the two GPUs (enabled by culua on the first copy); false: staged through host memory. Always false on the host backend
---@field link "nvlink"|"pcie"|"host" NVLink (directly or through NVSwitch, from NVML), PCIe, or "host" for the host backend's simulated devices

--- An options table with only a stream.
---@class cu.StreamOption
---@field stream? cu.Stream the stream to queue the work on (default: the current stream)

-- ## Arrays

--- Options of the functions that create device arrays.
---@class cu.CreateOptions
---@field dtype? cu.DType the element type (instead of the dtype argument)
---@field stream? cu.Stream allocate (stream-ordered) and fill on this stream

--- Creates an uninitialized device array (allocated from the stream-ordered pool). Out of memory
--- first collects garbage and retries once, then raises with the requested and free sizes.
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.CreateOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.CreateOptions):cu.Array
function cu.empty(shape, dtype, opts) end

--- Creates a device array filled with zeros. The fill is queued on the stream (asynchronous).
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.CreateOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.CreateOptions):cu.Array
function cu.zeros(shape, dtype, opts) end

--- Creates a device array filled with ones. The fill is queued on the stream (asynchronous).
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.CreateOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.CreateOptions):cu.Array
function cu.ones(shape, dtype, opts) end

--- Creates a device array filled with `value` (queued, asynchronous). Values are stored exactly or
--- not at all in integer and bool arrays: cu.full(3, 2.5, "i32") is an error.
---@param shape cu.Shape
---@param value cu.Scalar
---@param dtype? cu.DType default "f32"
---@param opts? cu.CreateOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,value:cu.Scalar,opts:cu.CreateOptions):cu.Array
function cu.full(shape, value, dtype, opts) end

--- Creates a device array from nested Lua tables (the shape follows the nesting; ragged tables are
--- errors), a scalar (a 0-d array) or another array (a copy, converted to dtype). Without dtype:
--- bool for booleans, c64 when a cu.complex appears, else f32.
---@param values table|cu.Scalar|cu.Array
---@param dtype? cu.DType
---@param opts? cu.CreateOptions
---@return cu.Array
---@overload fun(values:table|cu.Scalar|cu.Array,opts:cu.CreateOptions):cu.Array
function cu.array(values, dtype, opts) end

--- Evenly spaced values, as numpy: cu.arange(n) gives 0 .. n-1; cu.arange(start, stop [, step])
--- is half-open (stop excluded). The dtype defaults to "f32"; integer and bool dtypes need whole
--- numbers for n, start, stop and step (cu.arange(0, 1, 0.1, "i32") is an error).
---@param n number the number of values (or start, when stop follows)
---@param dtype? cu.DType default "f32"
---@param opts? cu.CreateOptions
---@return cu.Array
---@overload fun(start:number,stop:number,step?:number,dtype?:cu.DType,opts?:cu.CreateOptions):cu.Array
function cu.arange(n, dtype, opts) end

--- `count` evenly spaced values from start to stop, both ends included (stop excluded with
--- endpoint = false).
---@param start number
---@param stop number
---@param count integer
---@param dtype? cu.DType default "f32"
---@param opts? cu.LinspaceOptions
---@return cu.Array
function cu.linspace(start, stop, count, dtype, opts) end

--- Copies src into dst (any direction: device, pinned or pageable memory on either side); shapes
--- must match, dtypes are converted and views may be non-contiguous. Device-to-device copies are
--- asynchronous; copies between host and device are asynchronous only when the host side is
--- pinned and a stream is given, otherwise they wait for the work using the device array and
--- return when done. Between two devices (any layout and dtype) the copy runs on the destination
--- device's stream (stream= must belong to it), after the work queued on the source device's
--- current stream; it goes peer to peer where cu.devices() shows access, else through host memory,
--- and counts in cu.ledger()'s p2p fields. Returns dst.
---@param dst cu.Array
---@param src cu.Array
---@param opts? cu.StreamOption
---@return cu.Array dst
function cu.copy(dst, src, opts) end

--- An n-dimensional array of one dtype, in device memory or in (pinned or pageable) host memory.
--- Operations on device arrays are queued on a stream and return at once (asynchronous); reading
--- values (a[i], :item(), :totable(), tostring) waits for them. Memory is released stream-ordered
--- when the array is collected, at the end of a `<close>` scope, or by :free(). `a[i]` on a 1-D
--- array reads an element (synchronizes); on an N-D array it is a view of row i; a[-1] is the last.
--- `a[i] = v` writes an element (queued) or fills/copies a row. Arithmetic operators (+ - * / // %
--- ^ and unary -) are sugar for cu.add ...; comparisons are methods (a:lt(b), cu.eq(a, b)): Lua's
--- == compares identity and < <= raise. Methods: view reshape narrow transpose contiguous astype
--- clone fill free item totable to_host to_device, the math and reductions.
---@class cu.Array
---@field shape integer[] the size of each dimension (a new table on each read)
---@field dtype cu.DType the element type (its canonical name)
---@field ndim integer the number of dimensions (0 for a scalar array)
---@field size integer the number of elements
---@field nbytes integer size times the element size, in bytes
---@field location cu.Location where the memory is
---@field device integer the device the memory belongs to
---@field strides integer[] the step between neighbours of each dimension, in elements
---@field is_contiguous boolean true when the elements are dense in row-major order
---@field freed boolean true once the array (or the array it views) was freed
---@field mT cu.Array a view with the last two axes swapped (cu.matrix_transpose)
---@field T cu.Array the transposed view of a 2-D array (the standard's x.T; an error for other ranks)
---@field [integer] number|boolean|cu.Complex|cu.Array
---@operator add(cu.Operand):cu.Array
---@operator sub(cu.Operand):cu.Array
---@operator mul(cu.Operand):cu.Array
---@operator div(cu.Operand):cu.Array
---@operator idiv(cu.Operand):cu.Array
---@operator mod(cu.Operand):cu.Array
---@operator pow(cu.Operand):cu.Array
---@operator unm:cu.Array
---@operator band(cu.Operand):cu.Array
---@operator bor(cu.Operand):cu.Array
---@operator bxor(cu.Operand):cu.Array
---@operator shl(cu.Operand):cu.Array
---@operator shr(cu.Operand):cu.Array
---@operator bnot:cu.Array
---@operator len:integer
local Array = {}

--- A view with another shape (no copy). Needs a contiguous array; one size may be -1 (inferred).
--- The shape is a table or the sizes as arguments: a:view({4, -1}) or a:view(4, -1).
---@param shape integer[]
---@return cu.Array
---@overload fun(self:cu.Array,...:integer):cu.Array
function Array:view(shape) end

--- The array with another shape: a view when the layout allows it, else a contiguous copy
--- (queued). One size may be -1. The shape is a table or the sizes as arguments. Also
--- cu.reshape(a, shape, opts) (copy = true/false: see cu.ReshapeOptions).
---@param shape integer[]
---@param opts? cu.ReshapeOptions
---@return cu.Array
---@overload fun(self:cu.Array,...:integer):cu.Array
function Array:reshape(shape, opts) end

--- A view of `len` elements of dimension `dim` from `start` (both 1-based). No copy.
---@param dim integer 1-based dimension
---@param start integer 1-based first index
---@param len integer number of elements
---@return cu.Array
function Array:narrow(dim, start, len) end

--- A view with dimensions d1 and d2 swapped (1-based); without arguments the last two are swapped
--- (a 0-d or 1-D array is returned as it is). No copy; matmul takes transposed views for free.
---@param d1? integer
---@param d2? integer
---@return cu.Array
function Array:transpose(d1, d2) end

--- The array itself when contiguous, else a contiguous copy (queued).
---@param opts? cu.StreamOption
---@return cu.Array
function Array:contiguous(opts) end

--- A converted copy in the same location (queued): float to integer truncates toward zero and
--- saturates, NaN becomes 0; integer narrowing wraps; complex to real keeps the real part;
--- anything to bool is x ~= 0.
---@param dtype cu.DType
---@param opts? cu.StreamOption
---@return cu.Array
function Array:astype(dtype, opts) end

--- A copy of the array (same dtype and location; queued on device arrays).
---@param opts? cu.StreamOption
---@return cu.Array
function Array:clone(opts) end

--- Sets every element to v (queued, asynchronous on device arrays). Returns the array.
---@param v cu.Scalar
---@param opts? cu.StreamOption
---@return cu.Array self
function Array:fill(v, opts) end

--- Frees the memory now (stream-ordered: queued work that uses it finishes first). The array and
--- its views become unusable: any later use raises "attempt to use a released array (...)" (kind
--- "released"). Idempotent; also what `<close>` does.
function Array:free() end

--- The value of a one-element array (of any shape) as a Lua number, boolean or cu.complex.
--- Synchronizes: the copy is queued behind the work on the stream that used the array last, and
--- one wait covers both (one round trip). Other sizes are an error.
---@return number|boolean|cu.Complex
function Array:item() end

--- The values as nested Lua tables (a 0-d array gives the value). Synchronizes.
---@return table|number|boolean|cu.Complex
function Array:totable() end

--- A copy in host memory. Pageable by default (synchronous); with pinned=true and a stream the
--- copy is asynchronous: it returns at once and the host array is ready when the stream reaches
--- it (reading it earlier waits).
---@param opts? cu.ToHostOptions
---@return cu.Array
function Array:to_host(opts) end

--- A copy in device memory: on `device` when given, else on the stream's device, by default the
--- current one; queued on the stream; asynchronous from pinned memory with a stream, else it
--- returns when the copy is done. Moves a device array to another device (a:to_device(1)); with
--- both, the stream must belong to `device`.
---@param device? integer the target device (0-based)
---@param opts? cu.StreamOption
---@return cu.Array
---@overload fun(self:cu.Array, opts?:cu.StreamOption):cu.Array
function Array:to_device(device, opts) end

--- Options of a:to_host().
---@class cu.ToHostOptions
---@field pinned? boolean page-locked memory: fast and asynchronous with a stream (default false)
---@field stream? cu.Stream the stream to copy on

--- Options of the functions that create host arrays (cu.host.*).
---@class cu.HostCreateOptions
---@field dtype? cu.DType the element type (instead of the dtype argument)
---@field pinned? boolean page-locked memory (default false: pageable)

-- ## Host memory

--- Functions that create arrays in host memory (pageable, or pinned with {pinned=true}). Host
--- arrays work with cu.copy, :to_device() and the math (computed on the calling thread).
---@class cu.host
cu.host = {}

--- Creates an uninitialized host array.
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.HostCreateOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.HostCreateOptions):cu.Array
function cu.host.empty(shape, dtype, opts) end

--- Creates a host array filled with zeros.
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.HostCreateOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.HostCreateOptions):cu.Array
function cu.host.zeros(shape, dtype, opts) end

--- Creates a host array filled with ones.
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.HostCreateOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.HostCreateOptions):cu.Array
function cu.host.ones(shape, dtype, opts) end

--- Creates a host array filled with `value` (stored exactly or an error in integer arrays).
---@param shape cu.Shape
---@param value cu.Scalar
---@param dtype? cu.DType default "f32"
---@param opts? cu.HostCreateOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,value:cu.Scalar,opts:cu.HostCreateOptions):cu.Array
function cu.host.full(shape, value, dtype, opts) end

--- Creates a host array from nested Lua tables, a scalar or another array (as cu.array).
---@param values table|cu.Scalar|cu.Array
---@param dtype? cu.DType
---@param opts? cu.HostCreateOptions
---@return cu.Array
---@overload fun(values:table|cu.Scalar|cu.Array,opts:cu.HostCreateOptions):cu.Array
function cu.host.array(values, dtype, opts) end

--- Uniform random numbers in [0, 1) in host memory: the same numbers cu.rand gives on the device.
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.HostRandomOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.HostRandomOptions):cu.Array
function cu.host.rand(shape, dtype, opts) end

--- Standard normal random numbers in host memory: the same numbers cu.randn gives on the device.
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.HostRandomOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.HostRandomOptions):cu.Array
function cu.host.randn(shape, dtype, opts) end

-- ## Elementwise math

--- Options of elementwise operations.
---@class cu.MathOptions
---@field out? cu.Array write the result here (its shape, and a dtype of the same or a wider kind); returned
---@field stream? cu.Stream the stream to queue on (default: the current stream)

--- a + b with numpy broadcasting and type promotion (Lua numbers are weak: u8 + 1 stays u8). One
--- kernel launch, queued (asynchronous); host arrays compute on the calling thread. Mixing a host
--- and a device array is an error. bool + bool is or. Also the operator a + b and a:add(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.add(a, b, opts) end

--- a - b (broadcasting; integers wrap; an error for bool). Also a - b and a:sub(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.sub(a, b, opts) end

--- a * b (broadcasting; bool * bool is and). Also a * b and a:mul(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.mul(a, b, opts) end

--- a / b, true division (i32 / i32 is f64; complex uses Smith's division). Also a / b, a:div(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.div(a, b, opts) end

--- a ^ b. An integer raised to a negative power gives its truncated value. Complex as numpy: a
--- whole exponent below 100 by repeated products, a^0 = 1, 0^b = 0 when Re b > 0 and Im b is
--- finite (the standard, numpy 2) and NaN otherwise. Also a ^ b, a:pow(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.pow(a, b, opts) end

--- The larger of a and b, elementwise; NaN propagates; complex values in numpy's order (real
--- part, then imaginary part; a NaN in either part propagates).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.maximum(a, b, opts) end

--- The smaller of a and b, elementwise; NaN propagates; complex values in numpy's order (real
--- part, then imaginary part; a NaN in either part propagates).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.minimum(a, b, opts) end

--- a // b, Python's floor division (integer division by zero gives 0). Also a // b.
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.floordiv(a, b, opts) end

--- a % b with the sign of the divisor, as Python (integer modulo by zero gives 0). Also a % b.
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.mod(a, b, opts) end

--- a == b elementwise: a bool array (queued). Lua's == on arrays compares identity instead.
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.eq(a, b, opts) end

--- a ~= b elementwise: a bool array.
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.ne(a, b, opts) end

--- a < b elementwise: a bool array (an error for complex).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.lt(a, b, opts) end

--- a <= b elementwise: a bool array (an error for complex).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.le(a, b, opts) end

--- a > b elementwise: a bool array (an error for complex).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.gt(a, b, opts) end

--- a >= b elementwise: a bool array (an error for complex).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.ge(a, b, opts) end

--- x where cond is nonzero, else y (all three broadcast together). Queued.
---@param cond cu.Operand
---@param x cu.Operand
---@param y cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.where(cond, x, y, opts) end

--- -a (an error for bool). Also the operator -a and a:neg().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.neg(a, opts) end

--- |a|; the modulus for complex (a real result). Also a:abs().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.abs(a, opts) end

--- e^a. Integer arrays compute in the float that holds them (f16 for 8-bit, f32 for i16, f64 for
--- wider ones). Also a:exp().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.exp(a, opts) end

--- The natural logarithm. Also a:log().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.log(a, opts) end

--- The square root (the same bits on the GPU and the host backend). Also a:sqrt().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.sqrt(a, opts) end

--- The sine. Also a:sin().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.sin(a, opts) end

--- The cosine. Also a:cos().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.cos(a, opts) end

--- The hyperbolic tangent. Also a:tanh().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.tanh(a, opts) end

--- The complex conjugate (real arrays are returned as a copy). Also a:conj().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.conj(a, opts) end

--- The real part (a real array). Also a:real().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.real(a, opts) end

--- The imaginary part (a real array; zeros for real input). Also a:imag().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.imag(a, opts) end

--- a + b (see cu.add).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:add(b, opts) end

--- a - b (see cu.sub).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:sub(b, opts) end

--- a * b (see cu.mul).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:mul(b, opts) end

--- a / b (see cu.div).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:div(b, opts) end

--- a ^ b (see cu.pow).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:pow(b, opts) end

--- The elementwise larger of a and b (see cu.maximum).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:maximum(b, opts) end

--- The elementwise smaller of a and b (see cu.minimum).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:minimum(b, opts) end

--- a // b (see cu.floordiv).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:floordiv(b, opts) end

--- a % b (see cu.mod).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:mod(b, opts) end

--- a == b elementwise, a bool array (see cu.eq).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:eq(b, opts) end

--- a ~= b elementwise, a bool array (see cu.ne).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:ne(b, opts) end

--- a < b elementwise, a bool array (see cu.lt).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:lt(b, opts) end

--- a <= b elementwise, a bool array (see cu.le).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:le(b, opts) end

--- a > b elementwise, a bool array (see cu.gt).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:gt(b, opts) end

--- a >= b elementwise, a bool array (see cu.ge).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:ge(b, opts) end

--- -a (see cu.neg).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:neg(opts) end

--- |a| (see cu.abs).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:abs(opts) end

--- e^a (see cu.exp).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:exp(opts) end

--- The natural logarithm (see cu.log).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:log(opts) end

--- The square root (see cu.sqrt).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:sqrt(opts) end

--- The sine (see cu.sin).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:sin(opts) end

--- The cosine (see cu.cos).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:cos(opts) end

--- The hyperbolic tangent (see cu.tanh).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:tanh(opts) end

--- The complex conjugate (see cu.conj).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:conj(opts) end

--- The real part (see cu.real).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:real(opts) end

--- The imaginary part (see cu.imag).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:imag(opts) end

-- ## Element-wise functions of the Array API standard

-- The functions of the Array API standard that culua lacked, and the standard's names of those it
-- has under shorter ones. Every one broadcasts, promotes as numpy and takes cu.MathOptions; docs/
-- array-api.md lists them all with the differences from the standard and numpy.

--- The inverse cosine (complex: the principal value, C99's special values). Also a:acos().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.acos(a, opts) end

--- The inverse hyperbolic cosine. Also a:acosh().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.acosh(a, opts) end

--- The inverse sine. Also a:asin().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.asin(a, opts) end

--- The inverse hyperbolic sine. Also a:asinh().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.asinh(a, opts) end

--- The inverse tangent. Also a:atan().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.atan(a, opts) end

--- The inverse hyperbolic tangent. Also a:atanh().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.atanh(a, opts) end

--- The hyperbolic cosine. Also a:cosh().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.cosh(a, opts) end

--- The hyperbolic sine. Also a:sinh().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.sinh(a, opts) end

--- The tangent. Also a:tan().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.tan(a, opts) end

--- e^a - 1, accurate near 0 (complex: numpy's formula). Also a:expm1().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.expm1(a, opts) end

--- log(1 + a), accurate near 0 (complex: numpy's formula). Also a:log1p().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.log1p(a, opts) end

--- The base-2 logarithm. Also a:log2().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.log2(a, opts) end

--- The base-10 logarithm. Also a:log10().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.log10(a, opts) end

--- a * a (integers wrap; bools square in i8, as numpy). Also a:square().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.square(a, opts) end

--- +a: a copy (an error for bool). Also a:positive().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.positive(a, opts) end

--- -1, 0 or 1 (0 for -0.0, NaN for NaN); complex z / |z|, the standard's (numpy 1.24 took the real part's sign). An error for bool. Also a:sign().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.sign(a, opts) end

--- Rounds down. Integers keep their dtype (the standard; numpy 1.24 returns floats); an error for bool and complex. Also a:floor().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.floor(a, opts) end

--- Rounds up (integers kept; an error for bool and complex). Also a:ceil().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.ceil(a, opts) end

--- Rounds toward zero (integers kept; an error for bool and complex). Also a:trunc().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.trunc(a, opts) end

--- Rounds to the nearest whole number, halves to even (numpy's round with decimals = 0); complex: both parts; integers kept; an error for bool. Also a:round().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.round(a, opts) end

--- Whether the sign bit is set (true for -0.0 and a NaN with its sign bit), a bool array; integers: a < 0. An error for complex. Also a:signbit().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.signbit(a, opts) end

--- Whether each element is NaN (complex: either part), a bool array; false for integers. Also a:isnan().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.isnan(a, opts) end

--- Whether each element is +-inf (complex: either part), a bool array. Also a:isinf().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.isinf(a, opts) end

--- Whether each element is neither inf nor NaN (complex: both parts), a bool array. Also a:isfinite().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.isfinite(a, opts) end

--- ~a: the bits inverted (integers); not, for bools. An error for floats. Also the operator ~a. Also a:bitwise_invert().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.bitwise_invert(a, opts) end

--- not a, a bool array (nonzero is true, NaN too; any dtype as numpy). Also a:logical_not().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.logical_not(a, opts) end

--- The angle of the point (b, a): atan(a / b) in the right quadrant, signed zeros as C99. Real floats; integers compute in numpy's float type. Also a:atan2(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.atan2(a, b, opts) end

--- |a| with the sign of b (also of -0.0 and NaN). Real floats. Also a:copysign(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.copysign(a, b, opts) end

--- sqrt(a^2 + b^2) without overflow; hypot(inf, NaN) = inf. Real floats. Also a:hypot(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.hypot(a, b, opts) end

--- log(e^a + e^b) without overflow (numpy's algorithm). Real floats. Also a:logaddexp(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.logaddexp(a, b, opts) end

--- a & b: integers and bools (an error for floats). Also the operator a & b. Also a:bitwise_and(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.bitwise_and(a, b, opts) end

--- a | b: integers and bools. Also the operator a | b. Also a:bitwise_or(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.bitwise_or(a, b, opts) end

--- a xor b: integers and bools. Also the operator a ~ b. Also a:bitwise_xor(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.bitwise_xor(a, b, opts) end

--- a << b as numpy: bits past the top are lost, a count below 0 or of the width or more gives 0; bools shift as i8. Also the operator a << b. Also a:bitwise_left_shift(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.bitwise_left_shift(a, b, opts) end

--- a >> b as numpy: arithmetic for signed types, a count below 0 or of the width or more gives 0 (-1 for a negative a). Also the operator a >> b. Also a:bitwise_right_shift(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.bitwise_right_shift(a, b, opts) end

--- a and b, a bool array (nonzero is true; any dtype as numpy). Also a:logical_and(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.logical_and(a, b, opts) end

--- a or b, a bool array. Also a:logical_or(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.logical_or(a, b, opts) end

--- a xor b of truth values, a bool array. Also a:logical_xor(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.logical_xor(a, b, opts) end

--- a * b: the standard's name of cu.mul. Also a:multiply(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.multiply(a, b, opts) end

--- a - b: the standard's name of cu.sub. Also a:subtract(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.subtract(a, b, opts) end

--- a / b, true division: the standard's name of cu.div. Also a:divide(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.divide(a, b, opts) end

--- a // b: the standard's name of cu.floordiv. Also a:floor_divide(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.floor_divide(a, b, opts) end

--- a % b, with the divisor's sign: the standard's name of cu.mod. Also a:remainder(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.remainder(a, b, opts) end

--- a == b elementwise: the standard's name of cu.eq. Also a:equal(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.equal(a, b, opts) end

--- a ~= b elementwise: the standard's name of cu.ne. Also a:not_equal(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.not_equal(a, b, opts) end

--- a < b elementwise: the standard's name of cu.lt. Also a:less(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.less(a, b, opts) end

--- a <= b elementwise: the standard's name of cu.le. Also a:less_equal(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.less_equal(a, b, opts) end

--- a > b elementwise: the standard's name of cu.gt. Also a:greater(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.greater(a, b, opts) end

--- a >= b elementwise: the standard's name of cu.ge. Also a:greater_equal(b).
---@param a cu.Operand
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.greater_equal(a, b, opts) end

--- -a: the standard's name of cu.neg. Also a:negative().
---@param a cu.Array
---@param opts? cu.MathOptions
---@return cu.Array
function cu.negative(a, opts) end

--- x limited to [min, max]: minimum(maximum(x, min), max) as numpy's clip (NaN propagates; min > max
--- gives max). Either bound may be nil (neither: a copy); bounds are numbers or arrays, broadcast with x,
--- and take part in the promotion as numpy's. Also x:clip(min, max).
---@param x cu.Array
---@param min? cu.Operand
---@param max? cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function cu.clip(x, min, max, opts) end

--- The method form of cu.acos.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:acos(opts) end

--- The method form of cu.acosh.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:acosh(opts) end

--- The method form of cu.asin.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:asin(opts) end

--- The method form of cu.asinh.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:asinh(opts) end

--- The method form of cu.atan.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:atan(opts) end

--- The method form of cu.atanh.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:atanh(opts) end

--- The method form of cu.cosh.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:cosh(opts) end

--- The method form of cu.sinh.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:sinh(opts) end

--- The method form of cu.tan.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:tan(opts) end

--- The method form of cu.expm1.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:expm1(opts) end

--- The method form of cu.log1p.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:log1p(opts) end

--- The method form of cu.log2.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:log2(opts) end

--- The method form of cu.log10.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:log10(opts) end

--- The method form of cu.square.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:square(opts) end

--- The method form of cu.positive.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:positive(opts) end

--- The method form of cu.sign.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:sign(opts) end

--- The method form of cu.floor.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:floor(opts) end

--- The method form of cu.ceil.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:ceil(opts) end

--- The method form of cu.trunc.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:trunc(opts) end

--- The method form of cu.round.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:round(opts) end

--- The method form of cu.signbit.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:signbit(opts) end

--- The method form of cu.isnan.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:isnan(opts) end

--- The method form of cu.isinf.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:isinf(opts) end

--- The method form of cu.isfinite.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:isfinite(opts) end

--- The method form of cu.bitwise_invert.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:bitwise_invert(opts) end

--- The method form of cu.logical_not.
---@param opts? cu.MathOptions
---@return cu.Array
function Array:logical_not(opts) end

--- The method form of cu.atan2.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:atan2(b, opts) end

--- The method form of cu.copysign.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:copysign(b, opts) end

--- The method form of cu.hypot.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:hypot(b, opts) end

--- The method form of cu.logaddexp.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:logaddexp(b, opts) end

--- The method form of cu.bitwise_and.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:bitwise_and(b, opts) end

--- The method form of cu.bitwise_or.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:bitwise_or(b, opts) end

--- The method form of cu.bitwise_xor.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:bitwise_xor(b, opts) end

--- The method form of cu.bitwise_left_shift.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:bitwise_left_shift(b, opts) end

--- The method form of cu.bitwise_right_shift.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:bitwise_right_shift(b, opts) end

--- The method form of cu.logical_and.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:logical_and(b, opts) end

--- The method form of cu.logical_or.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:logical_or(b, opts) end

--- The method form of cu.logical_xor.
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:logical_xor(b, opts) end

--- See cu.multiply (= cu.mul).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:multiply(b, opts) end

--- See cu.subtract (= cu.sub).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:subtract(b, opts) end

--- See cu.divide (= cu.div).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:divide(b, opts) end

--- See cu.floor_divide (= cu.floordiv).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:floor_divide(b, opts) end

--- See cu.remainder (= cu.mod).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:remainder(b, opts) end

--- See cu.equal (= cu.eq).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:equal(b, opts) end

--- See cu.not_equal (= cu.ne).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:not_equal(b, opts) end

--- See cu.less (= cu.lt).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:less(b, opts) end

--- See cu.less_equal (= cu.le).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:less_equal(b, opts) end

--- See cu.greater (= cu.gt).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:greater(b, opts) end

--- See cu.greater_equal (= cu.ge).
---@param b cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:greater_equal(b, opts) end

--- See cu.negative (= cu.neg).
---@param opts? cu.MathOptions
---@return cu.Array
function Array:negative(opts) end

--- The method form of cu.clip.
---@param min? cu.Operand
---@param max? cu.Operand
---@param opts? cu.MathOptions
---@return cu.Array
function Array:clip(min, max, opts) end

-- ## Reductions

--- Options of the reductions.
---@class cu.ReduceOptions
---@field axis? integer|integer[] reduce along this dimension only (1-based; negative counts from the end), or several {1, 3} (not for norm, argmax, argmin)
---@field keepdims? boolean keep the reduced dimension with size 1 (default false)
---@field out? cu.Array write the result here; returned
---@field stream? cu.Stream the stream to queue on

--- The sum of the elements: a 0-d array for the whole array, or the sums along `axis`. Never
--- synchronizes (queued; fetch with :item()). Integers and bool give i64 (wrapping); f16/bf16
--- accumulate in f32; pairwise/tree-shaped, so the order depends only on the shape. Also a:sum().
---@param a cu.Array
---@param opts? cu.SumOptions
---@return cu.Array
function cu.sum(a, opts) end

--- The mean (f64 for integer input); NaN for an empty array. Queued. Also a:mean().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.mean(a, opts) end

--- The largest element (NaN propagates; complex and empty arrays are errors). Queued. Also a:max().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.max(a, opts) end

--- The smallest element (NaN propagates; complex and empty arrays are errors). Queued. Also
--- a:min().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.min(a, opts) end

--- The product of the elements (i64 for integers; 1 for an empty array). Queued. Also a:prod().
---@param a cu.Array
---@param opts? cu.SumOptions
---@return cu.Array
function cu.prod(a, opts) end

--- The 2-norm sqrt(sum |x|^2) (f64 for integers; f32 for f32 and c64). Queued. Also a:norm().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.norm(a, opts) end

--- The 1-based index (i64) of the largest element, the first on ties; the first NaN wins. Queued.
--- Also a:argmax(); a[a:argmax():item()] is the largest element of a 1-D array.
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.argmax(a, opts) end

--- The 1-based index (i64) of the smallest element, the first on ties. Queued. Also a:argmin().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.argmin(a, opts) end

--- The sum of the elements, a 0-d array or along axis; no synchronization (see cu.sum).
---@param opts? cu.SumOptions
---@return cu.Array
function Array:sum(opts) end

--- The mean (see cu.mean).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:mean(opts) end

--- The largest element (see cu.max).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:max(opts) end

--- The smallest element (see cu.min).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:min(opts) end

--- The product (see cu.prod).
---@param opts? cu.SumOptions
---@return cu.Array
function Array:prod(opts) end

--- The 2-norm (see cu.norm).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:norm(opts) end

--- The 1-based index of the largest element (see cu.argmax).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:argmax(opts) end

--- The 1-based index of the smallest element (see cu.argmin).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:argmin(opts) end

-- ## Sorting, searching and sets

--- Options of cu.sort and cu.argsort.
---@class cu.SortOptions
---@field axis? integer sort along this dimension (1-based; negative counts from the end; default -1)
---@field descending? boolean largest first (default false); NaNs then come first, ties keep their order
---@field stable? boolean accepted for the Array API standard: every sort is stable
---@field stream? cu.Stream the stream to queue on

--- Options of cu.nonzero and cu.unique_*.
---@class cu.SetOptions
---@field stream? cu.Stream the stream to queue on

--- Options of cu.count_nonzero.
---@class cu.CountNonzeroOptions
---@field axis? integer|integer[] count along these dimensions only (1-based; negative from the end)
---@field keepdims? boolean keep the counted dimensions with size 1 (default false)
---@field stream? cu.Stream the stream to queue on

--- Options of cu.searchsorted.
---@class cu.SearchsortedOptions
---@field side? "left"|"right" where equal elements put the position (default "left")
---@field sorter? cu.Array integer 1-based positions that sort x1 (as cu.argsort gives)
---@field stream? cu.Stream the stream to queue on

--- The result of cu.unique_all, cu.unique_counts and cu.unique_inverse (each has its fields).
---@class cu.UniqueResult
---@field values cu.Array the distinct elements, sorted (NaNs each on their own, -0.0 == 0.0)
---@field indices? cu.Array i64 1-based flat position of each value's first occurrence (unique_all)
---@field inverse_indices? cu.Array i64 for each element of x, the 1-based position of its value (x's shape)
---@field counts? cu.Array i64 occurrences of each value (unique_all, unique_counts)

--- A sorted copy of a along axis (default the last): numpy's order, stable; NaN last (first
--- when descending), -0.0 equal to 0.0, complex numbers by real then imaginary part. Every dtype.
--- Queued, no synchronization. CUB radix sorts on the GPU (merge sort for complex). Also a:sort().
---@param a cu.Array
---@param opts? cu.SortOptions
---@return cu.Array
function cu.sort(a, opts) end

--- The 1-based positions (i64) that sort a along axis: cu.sort's order, ties in input order
--- (numpy's argsort(kind="stable") + 1). Queued. Also a:argsort().
---@param a cu.Array
---@param opts? cu.SortOptions
---@return cu.Array
function cu.argsort(a, opts) end

--- The nonzero elements' 1-based coordinates: a table with one i64 array per dimension of a, in
--- row-major order (NaN counts as nonzero). Synchronizes (the count sets the size). cu.where(cond)
--- with one argument is the same. Also a:nonzero().
---@param a cu.Array
---@param opts? cu.SetOptions
---@return cu.Array[]
function cu.nonzero(a, opts) end

--- The number of nonzero elements (i64): a 0-d array, or counts along axis. Queued. Also
--- a:count_nonzero().
---@param a cu.Array
---@param opts? cu.CountNonzeroOptions
---@return cu.Array
function cu.count_nonzero(a, opts) end

--- For each element v of x2 (an array or a number), the 1-based position p at which v would be
--- inserted into the sorted 1-D x1 to keep it sorted: x1[p-1] < v <= x1[p] (side "left") or
--- x1[p-1] <= v < x1[p] ("right"); p runs 1..#x1+1. Compared in the promoted dtype with cu.sort's
--- order. i64, x2's shape; queued (a sorter is range-checked, which synchronizes). Also
--- x1:searchsorted(x2).
---@param x1 cu.Array
---@param x2 cu.Array|number
---@param opts? cu.SearchsortedOptions
---@return cu.Array
function cu.searchsorted(x1, x2, opts) end

--- The distinct elements of a (flattened), sorted. NaNs are distinct (the Array API standard);
--- -0.0 and 0.0 are one value. Synchronizes. Also a:unique_values().
---@param a cu.Array
---@param opts? cu.SetOptions
---@return cu.Array
function cu.unique_values(a, opts) end

--- {values =, counts =}: the distinct elements and how often each occurs. Synchronizes.
---@param a cu.Array
---@param opts? cu.SetOptions
---@return cu.UniqueResult
function cu.unique_counts(a, opts) end

--- {values =, inverse_indices =}: the distinct elements, and for each element of a the 1-based
--- position of its value (a's shape): values[inverse_indices] rebuilds a. Synchronizes.
---@param a cu.Array
---@param opts? cu.SetOptions
---@return cu.UniqueResult
function cu.unique_inverse(a, opts) end

--- {values =, indices =, inverse_indices =, counts =}: all of the above, and the 1-based flat
--- position of each value's first occurrence. Synchronizes. Also a:unique_all().
---@param a cu.Array
---@param opts? cu.SetOptions
---@return cu.UniqueResult
function cu.unique_all(a, opts) end

--- A sorted copy (see cu.sort).
---@param opts? cu.SortOptions
---@return cu.Array
function Array:sort(opts) end

--- The positions that sort the array (see cu.argsort).
---@param opts? cu.SortOptions
---@return cu.Array
function Array:argsort(opts) end

--- The coordinates of the nonzero elements (see cu.nonzero).
---@param opts? cu.SetOptions
---@return cu.Array[]
function Array:nonzero(opts) end

--- The number of nonzero elements (see cu.count_nonzero).
---@param opts? cu.CountNonzeroOptions
---@return cu.Array
function Array:count_nonzero(opts) end

--- Insertion positions of x2 in this sorted 1-D array (see cu.searchsorted).
---@param x2 cu.Array|number
---@param opts? cu.SearchsortedOptions
---@return cu.Array
function Array:searchsorted(x2, opts) end

--- The distinct elements (see cu.unique_values).
---@param opts? cu.SetOptions
---@return cu.Array
function Array:unique_values(opts) end

--- The distinct elements and their counts (see cu.unique_counts).
---@param opts? cu.SetOptions
---@return cu.UniqueResult
function Array:unique_counts(opts) end

--- The distinct elements and the inverse positions (see cu.unique_inverse).
---@param opts? cu.SetOptions
---@return cu.UniqueResult
function Array:unique_inverse(opts) end

--- Distinct elements, first positions, inverse positions and counts (see cu.unique_all).
---@param opts? cu.SetOptions
---@return cu.UniqueResult
function Array:unique_all(opts) end
-- ## Statistics and scans

--- Options of cu.sum, cu.prod, cu.nansum and cu.nanprod with dtype= (cu.ReduceOptions and:).
---@class cu.SumOptions
---@field axis? integer|integer[] the axis or axes to reduce (1-based; negative from the end)
---@field keepdims? boolean keep the reduced dimensions with size 1 (default false)
---@field dtype? cu.DType convert the elements to this dtype first; the result has it (integers wrap)
---@field out? cu.Array write the result here; returned
---@field stream? cu.Stream the stream to queue on

--- Options of cu.var, cu.std, cu.nanvar and cu.nanstd.
---@class cu.VarOptions
---@field axis? integer|integer[] the axis or axes to reduce (1-based; negative from the end)
---@field keepdims? boolean keep the reduced dimensions with size 1 (default false)
---@field correction? number subtracted from the count in the divisor (0: population, 1: sample; >= 0)
---@field ddof? number numpy's name for correction (give one of them)
---@field out? cu.Array write the result here; returned
---@field stream? cu.Stream the stream to queue on

--- Options of the scans cu.cumulative_sum, cu.cumulative_prod, cu.cumsum and cu.cumprod.
---@class cu.ScanOptions
---@field axis? integer the axis to scan (1-based; negative from the end). cumulative_*: required for more than one dimension; cumsum/cumprod: without it the array is flattened
---@field dtype? cu.DType convert the elements to this dtype first; the result has it (integers wrap)
---@field include_initial? boolean start each scan with the identity (0 or 1): the axis gets one more element
---@field out? cu.Array write the result here; returned
---@field stream? cu.Stream the stream to queue on

--- The variance (mean squared deviation from the mean; complex: of |x - mean|) over every element
--- or `axis` (one or several); divisor max(n - correction, 0). One pass of Welford moments merged
--- by Chan's formula; f16/bf16/f32 accumulate in f32, others (c64 too) in f64. Integers and bool give
--- f64, complex their real type. Queued. Also a:var().
---@param a cu.Array
---@param opts? cu.VarOptions
---@return cu.Array
function cu.var(a, opts) end

--- The standard deviation sqrt(var) (see cu.var). Queued. Also a:std().
---@param a cu.Array
---@param opts? cu.VarOptions
---@return cu.Array
function cu.std(a, opts) end

--- Whether any element is nonzero (NaN counts as nonzero): a bool array. Empty: false. Also a:any().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.any(a, opts) end

--- Whether every element is nonzero: a bool array. Empty: true. Queued. Also a:all().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.all(a, opts) end

--- The sum with NaN elements counted as 0 (integers: cu.sum). Queued. Also a:nansum().
---@param a cu.Array
---@param opts? cu.SumOptions
---@return cu.Array
function cu.nansum(a, opts) end

--- The product with NaN elements counted as 1 (integers: cu.prod). Queued. Also a:nanprod().
---@param a cu.Array
---@param opts? cu.SumOptions
---@return cu.Array
function cu.nanprod(a, opts) end

--- The mean of the elements that are not NaN (NaN when there are none). Queued. Also a:nanmean().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.nanmean(a, opts) end

--- The variance of the elements that are not NaN (see cu.var). Queued. Also a:nanvar().
---@param a cu.Array
---@param opts? cu.VarOptions
---@return cu.Array
function cu.nanvar(a, opts) end

--- The standard deviation of the elements that are not NaN. Queued. Also a:nanstd().
---@param a cu.Array
---@param opts? cu.VarOptions
---@return cu.Array
function cu.nanstd(a, opts) end

--- The largest element that is not NaN (NaN when all are). Queued. Also a:nanmax().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.nanmax(a, opts) end

--- The smallest element that is not NaN (NaN when all are). Queued. Also a:nanmin().
---@param a cu.Array
---@param opts? cu.ReduceOptions
---@return cu.Array
function cu.nanmin(a, opts) end

--- The cumulative sum along `axis` (the Array API's cumulative_sum): integers and bool give i64
--- (wrapping), f16/bf16 accumulate in f32. GPU: culua's single-pass scan (CUB's for one long
--- row, products, complex numbers and unaligned data). Queued. Also a:cumulative_sum().
---@param a cu.Array
---@param opts? cu.ScanOptions
---@return cu.Array
function cu.cumulative_sum(a, opts) end

--- The cumulative product along `axis` (see cu.cumulative_sum). Queued. Also a:cumulative_prod().
---@param a cu.Array
---@param opts? cu.ScanOptions
---@return cu.Array
function cu.cumulative_prod(a, opts) end

--- numpy's cumsum: cu.cumulative_sum, the array flattened when `axis` is not given. Also a:cumsum().
---@param a cu.Array
---@param opts? cu.ScanOptions
---@return cu.Array
function cu.cumsum(a, opts) end

--- numpy's cumprod: cu.cumulative_prod, flattened without `axis`. Also a:cumprod().
---@param a cu.Array
---@param opts? cu.ScanOptions
---@return cu.Array
function cu.cumprod(a, opts) end

--- The variance (see cu.var).
---@param opts? cu.VarOptions
---@return cu.Array
function Array:var(opts) end

--- The standard deviation (see cu.std).
---@param opts? cu.VarOptions
---@return cu.Array
function Array:std(opts) end

--- Whether any element is nonzero (see cu.any).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:any(opts) end

--- Whether every element is nonzero (see cu.all).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:all(opts) end

--- The sum skipping NaN (see cu.nansum).
---@param opts? cu.SumOptions
---@return cu.Array
function Array:nansum(opts) end

--- The product skipping NaN (see cu.nanprod).
---@param opts? cu.SumOptions
---@return cu.Array
function Array:nanprod(opts) end

--- The mean skipping NaN (see cu.nanmean).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:nanmean(opts) end

--- The variance skipping NaN (see cu.nanvar).
---@param opts? cu.VarOptions
---@return cu.Array
function Array:nanvar(opts) end

--- The standard deviation skipping NaN (see cu.nanstd).
---@param opts? cu.VarOptions
---@return cu.Array
function Array:nanstd(opts) end

--- The largest element skipping NaN (see cu.nanmax).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:nanmax(opts) end

--- The smallest element skipping NaN (see cu.nanmin).
---@param opts? cu.ReduceOptions
---@return cu.Array
function Array:nanmin(opts) end

--- The cumulative sum (see cu.cumulative_sum).
---@param opts? cu.ScanOptions
---@return cu.Array
function Array:cumulative_sum(opts) end

--- The cumulative product (see cu.cumulative_prod).
---@param opts? cu.ScanOptions
---@return cu.Array
function Array:cumulative_prod(opts) end

--- numpy's cumsum (see cu.cumsum).
---@param opts? cu.ScanOptions
---@return cu.Array
function Array:cumsum(opts) end

--- numpy's cumprod (see cu.cumprod).
---@param opts? cu.ScanOptions
---@return cu.Array
function Array:cumprod(opts) end

-- ## Random numbers

--- Options of cu.rand and cu.randn.
---@class cu.RandomOptions
---@field dtype? cu.DType f32, f64, f16, bf16, c64 or c128 (instead of the dtype argument)
---@field seed? integer use this seed alone (the global sequence is left as it is)
---@field out? cu.Array fill this array instead of creating one; returned
---@field stream? cu.Stream the stream to queue on

--- Options of cu.host.rand and cu.host.randn.
---@class cu.HostRandomOptions
---@field dtype? cu.DType f32, f64, f16, bf16, c64 or c128
---@field seed? integer use this seed alone
---@field out? cu.Array fill this array instead of creating one; returned
---@field pinned? boolean page-locked memory (default false)

--- Sets the seed of the global random sequence (default 0) and restarts it: the calls that follow
--- give the same numbers again.
---@param n integer
function cu.seed(n) end

--- Uniform random numbers in [0, 1) (never 1.0), counter-based (Philox4x32-10): the GPU and the
--- host backend give the same bits whatever the launch configuration. Queued. Without seed= each
--- call draws from the global sequence.
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.RandomOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.RandomOptions):cu.Array
function cu.rand(shape, dtype, opts) end

--- Standard normal random numbers (Box-Muller; identical on both backends). For complex dtypes
--- each part has variance 1/2. Queued.
---@param shape cu.Shape
---@param dtype? cu.DType default "f32"
---@param opts? cu.RandomOptions
---@return cu.Array
---@overload fun(shape:cu.Shape,opts:cu.RandomOptions):cu.Array
function cu.randn(shape, dtype, opts) end

-- ## Linear algebra

--- Options of cu.matmul.
---@class cu.MatmulOptions
---@field out? cu.Array a contiguous result array of a dtype numpy's same_kind rule allows; returned
---@field alpha? number|cu.Complex scales the product (default 1; integer products: an integer)
---@field beta? number|cu.Complex adds beta * out to the product (needs out; default 0)
---@field ta? boolean use a transposed (no copy)
---@field tb? boolean use b transposed (no copy)
---@field tf32? boolean allow TF32 tensor cores for f32 (default false)
---@field stream? cu.Stream the stream to queue on

--- Options of cu.dot.
---@class cu.DotOptions
---@field out? cu.Array a 0-d result array; returned
---@field stream? cu.Stream the stream to queue on

--- The matrix product a @ b as numpy: [..., M, K] @ [..., K, N], batch dimensions broadcast, 1-D
--- operands are vectors. cuBLAS on the GPU, OpenBLAS on the host backend; queued. Every dtype:
--- f16/bf16 accumulate in f32; integers wrap in the result dtype and bool is the or of ands (as
--- numpy); mixed dtypes promote as the elementwise operations. Transposed views cost no copy;
--- other non-contiguous operands are copied first. Also a:matmul(b).
---@param a cu.Array
---@param b cu.Array
---@param opts? cu.MatmulOptions
---@return cu.Array
function cu.matmul(a, b, opts) end

--- The dot product of two vectors as a 0-d array (queued, no synchronization; complex: no
--- conjugation; integer vectors are exact and wrap). Also a:dot(b).
---@param x cu.Array
---@param y cu.Array
---@param opts? cu.DotOptions
---@return cu.Array
function cu.dot(x, y, opts) end

--- The matrix product a @ b (see cu.matmul).
---@param b cu.Array
---@param opts? cu.MatmulOptions
---@return cu.Array
function Array:matmul(b, opts) end

--- The dot product (see cu.dot).
---@param y cu.Array
---@param opts? cu.DotOptions
---@return cu.Array
function Array:dot(y, opts) end

-- ## Manipulation, creation and indexing

--- The Array API standard's manipulation, creation, indexing and small linear algebra functions
--- (docs/array-api.md). Axes are 1-based (negative ones count from the end), index values too.
--- Views (no copy, writes show in the original) where numpy returns views: flip, permute_dims,
--- moveaxis, expand_dims, squeeze, broadcast_to, matrix_transpose (a.mT), unstack and slices
--- a[{lo, hi, step}]; new arrays otherwise. Indexing: a[{lo, hi, step}] slices dimension 1 (1-based,
--- hi included, negative bounds count from the end, a negative step walks backwards, out-of-range
--- bounds are clamped as string.sub's); a[{2, {1, -1, 2}, {}}] indexes dimension after dimension
--- (an integer selects, a table slices, {} keeps all); a[mask] with a bool array of a's shape (or
--- of its leading dimensions) gives the selected elements as a new 1-D array (rows: 2-D, ...), and
--- a[mask] = v sets them (v a scalar or an array broadcast to the selection); a[idx] with an
--- integer array gathers rows (cu.take along axis 1) and a[idx] = v scatters to them. Index arrays
--- are checked on the device: an index out of range raises an error naming it, and nothing is read
--- or written through it. A mask is read on the host (the count of true elements decides the
--- result's shape).
---@class cu.AxisOption
---@field axis? integer|integer[] the axis (axes) to work on, 1-based; negative from the end

--- Options of the manipulation functions that queue copies.
---@class cu.AxisStreamOptions
---@field axis? integer|integer[]|false the axis, 1-based (false: the flattened array, numpy's None)
---@field stream? cu.Stream the stream to queue on

--- Options of cu.linspace.
---@class cu.LinspaceOptions
---@field dtype? cu.DType the element type (instead of the dtype argument)
---@field endpoint? boolean include stop as the last value (default true)
---@field stream? cu.Stream allocate (stream-ordered) and fill on this stream

--- Options of cu.eye.
---@class cu.EyeOptions
---@field k? integer the diagonal: 0 the main one (default), > 0 above, < 0 below
---@field dtype? cu.DType default "f32"
---@field stream? cu.Stream allocate and fill on this stream

--- Options of cu.tril and cu.triu.
---@class cu.TriangleOptions
---@field k? integer the diagonal that bounds the triangle (default 0)
---@field stream? cu.Stream the stream to queue on

--- Options of cu.meshgrid.
---@class cu.MeshgridOptions
---@field indexing? "xy"|"ij" "xy" (default) swaps the first two output dimensions, as numpy's
---@field stream? cu.Stream the stream to queue on

--- Options of cu.reshape.
---@class cu.ReshapeOptions
---@field copy? boolean true: always a copy; false: never (an error when a copy is needed); absent:
--- a view when the array is contiguous, else a copy
---@field stream? cu.Stream the stream to queue a copy on

--- Options of cu.asarray.
---@class cu.AsarrayOptions
---@field dtype? cu.DType convert to this dtype
---@field copy? boolean true: always a copy; false: never (an error when one is needed)
---@field stream? cu.Stream the stream to queue on

--- Options of cu.tensordot.
---@class cu.TensordotOptions
---@field axes? integer|integer[][] n: the last n axes of a with the first n of b (default 2); or
--- {{axes of a}, {axes of b}}, 1-based
---@field stream? cu.Stream the stream to queue on

--- A view of `a` broadcast to `shape` (stride 0 along new and stretched dimensions). Also
--- a:broadcast_to(shape).
---@param a cu.Array
---@param shape cu.Shape
---@return cu.Array
function cu.broadcast_to(a, shape) end

--- Views of the arrays broadcast to one shape (numpy's rules); returns as many arrays as given.
---@param a cu.Array
---@param ... cu.Array
---@return cu.Array ...
function cu.broadcast_arrays(a, ...) end

--- The arrays joined along an existing axis (default 1; axis = false flattens them first), in
--- their promoted dtype. A new array.
---@param arrays cu.Array[]
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function cu.concat(arrays, opts) end

--- The arrays (of one shape) joined along a new axis (default 1; 1..ndim+1), in their promoted
--- dtype. A new array.
---@param arrays cu.Array[]
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function cu.stack(arrays, opts) end

--- The slices along an axis (default 1), as views; returns one array per slice.
---@param a cu.Array
---@param opts? cu.AxisOption
---@return cu.Array ...
function cu.unstack(a, opts) end

--- A view with a new dimension of size 1 at position `axis` (1..ndim+1, default 1; -1 appends).
---@param a cu.Array
---@param axis? integer|cu.AxisOption
---@return cu.Array
function cu.expand_dims(a, axis) end

--- A view without the given size-1 axes (all size-1 axes when none are given). Squeezing an axis
--- of another size is an error.
---@param a cu.Array
---@param axis? integer|integer[]|cu.AxisOption
---@return cu.Array
function cu.squeeze(a, axis) end

--- A view with the order of elements reversed along the given axes (all when none): negative
--- strides, no copy.
---@param a cu.Array
---@param axis? integer|integer[]|cu.AxisOption
---@return cu.Array
function cu.flip(a, axis) end

--- A view with the axes permuted: result axis i is axis axes[i] of a (1-based; numpy's transpose
--- with axes + 1).
---@param a cu.Array
---@param axes integer[]
---@return cu.Array
function cu.permute_dims(a, axes) end

--- A view with axes moved from `source` to `destination` (integers or tables; the other axes keep
--- their order).
---@param a cu.Array
---@param source integer|integer[]
---@param destination integer|integer[]
---@return cu.Array
function cu.moveaxis(a, source, destination) end

--- A view with the last two axes swapped (also a.mT); needs at least 2 dimensions.
---@param a cu.Array
---@return cu.Array
function cu.matrix_transpose(a) end

--- The array in a new shape (one size may be -1): a view of a contiguous array, else a copy;
--- copy = true always copies, copy = false refuses to.
---@param a cu.Array
---@param shape integer[]
---@param opts? cu.ReshapeOptions
---@return cu.Array
function cu.reshape(a, shape, opts) end

--- The elements shifted by `shift` along the given axes (one shift, or one per axis), wrapping
--- around; without axes the flattened array shifts and keeps its shape. A new array.
---@param a cu.Array
---@param shift integer|integer[]
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function cu.roll(a, shift, opts) end

--- The standard's repeat (a Lua keyword): each element `repeats` times along the axis (without
--- one: of the flattened array), or repeats[i] times for element i (a table or an integer array).
--- A new array.
---@param a cu.Array
---@param repeats integer|integer[]|cu.Array
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function cu.repeat_each(a, repeats, opts) end

--- The array repeated reps[i] times along axis i (an integer: the last axis; missing leading
--- axes count as 1, as numpy's). A new array.
---@param a cu.Array
---@param reps integer|integer[]
---@param opts? cu.StreamOption
---@return cu.Array
function cu.tile(a, reps, opts) end

--- A new uninitialized array of a's shape, location and device (dtype: a's unless given).
---@param a cu.Array
---@param dtype? cu.DType
---@param opts? cu.CreateOptions
---@return cu.Array
function cu.empty_like(a, dtype, opts) end

--- A new array of zeros of a's shape, location and device (dtype: a's unless given).
---@param a cu.Array
---@param dtype? cu.DType
---@param opts? cu.CreateOptions
---@return cu.Array
function cu.zeros_like(a, dtype, opts) end

--- A new array of ones of a's shape, location and device (dtype: a's unless given).
---@param a cu.Array
---@param dtype? cu.DType
---@param opts? cu.CreateOptions
---@return cu.Array
function cu.ones_like(a, dtype, opts) end

--- A new array filled with `value`, of a's shape, location and device (dtype: a's unless given).
---@param a cu.Array
---@param value cu.Scalar
---@param dtype? cu.DType
---@param opts? cu.CreateOptions
---@return cu.Array
function cu.full_like(a, value, dtype, opts) end

--- A device array of n_rows x n_cols (default n_rows) with ones on diagonal k, zeros elsewhere.
---@param n_rows integer
---@param n_cols? integer
---@param dtype? cu.DType
---@param opts? cu.EyeOptions
---@return cu.Array
function cu.eye(n_rows, n_cols, dtype, opts) end

--- The lower triangle of the last two dimensions (elements on and below diagonal k; others 0).
---@param a cu.Array
---@param opts? cu.TriangleOptions
---@return cu.Array
function cu.tril(a, opts) end

--- The upper triangle of the last two dimensions (elements on and above diagonal k; others 0).
---@param a cu.Array
---@param opts? cu.TriangleOptions
---@return cu.Array
function cu.triu(a, opts) end

--- Coordinate arrays from 1-D arrays (new arrays, one per input, each of its own dtype).
---@param a cu.Array
---@param ... cu.Array|cu.MeshgridOptions
---@return cu.Array ...
function cu.meshgrid(a, ...) end

--- An array from Lua values (as cu.array) or the array itself when no conversion or copy is asked.
---@param values table|cu.Scalar|cu.Array
---@param dtype? cu.DType
---@param opts? cu.AsarrayOptions
---@return cu.Array
function cu.asarray(values, dtype, opts) end

--- The elements at the 1-based indices (an integer array of any shape; negative ones count from
--- the end) along the axis (required unless a is 1-D): a's shape with that axis replaced by the
--- index's shape. An index out of range is an error. A new array.
---@param a cu.Array
---@param indices cu.Array
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function cu.take(a, indices, opts) end

--- numpy's take_along_axis: indices has a's number of dimensions (others broadcast); default
--- axis -1. A new array.
---@param a cu.Array
---@param indices cu.Array
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function cu.take_along_axis(a, indices, opts) end

--- The sum of conj(a) * b along an axis of the broadcast shape (default -1), in the promoted dtype
--- (bool: any of a and b).
---@param a cu.Array
---@param b cu.Array
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function cu.vecdot(a, b, opts) end

--- The outer product of two 1-D arrays: [i, j] = a[i] * b[j].
---@param a cu.Array
---@param b cu.Array
---@param opts? cu.StreamOption
---@return cu.Array
function cu.outer(a, b, opts) end

--- The tensor contraction of a and b over the given axes (a matrix product of the permuted,
--- reshaped operands, cu.matmul's dtypes).
---@param a cu.Array
---@param b cu.Array
---@param opts? cu.TensordotOptions
---@return cu.Array
function cu.tensordot(a, b, opts) end

--- The method form of cu.broadcast_to.
---@param shape cu.Shape
---@return cu.Array
function Array:broadcast_to(shape) end

--- The method form of cu.unstack.
---@param opts? cu.AxisOption
---@return cu.Array ...
function Array:unstack(opts) end

--- The method form of cu.expand_dims.
---@param axis? integer|cu.AxisOption
---@return cu.Array
function Array:expand_dims(axis) end

--- The method form of cu.squeeze.
---@param axis? integer|integer[]|cu.AxisOption
---@return cu.Array
function Array:squeeze(axis) end

--- The method form of cu.flip.
---@param axis? integer|integer[]|cu.AxisOption
---@return cu.Array
function Array:flip(axis) end

--- The method form of cu.permute_dims.
---@param axes integer[]
---@return cu.Array
function Array:permute_dims(axes) end

--- The method form of cu.moveaxis.
---@param source integer|integer[]
---@param destination integer|integer[]
---@return cu.Array
function Array:moveaxis(source, destination) end

--- The method form of cu.matrix_transpose.
---@return cu.Array
function Array:matrix_transpose() end

--- The method form of cu.roll.
---@param shift integer|integer[]
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function Array:roll(shift, opts) end

--- The method form of cu.repeat_each.
---@param repeats integer|integer[]|cu.Array
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function Array:repeat_each(repeats, opts) end

--- The method form of cu.tile.
---@param reps integer|integer[]
---@param opts? cu.StreamOption
---@return cu.Array
function Array:tile(reps, opts) end

--- The method form of cu.empty_like.
---@param dtype? cu.DType
---@param opts? cu.CreateOptions
---@return cu.Array
function Array:empty_like(dtype, opts) end

--- The method form of cu.zeros_like.
---@param dtype? cu.DType
---@param opts? cu.CreateOptions
---@return cu.Array
function Array:zeros_like(dtype, opts) end

--- The method form of cu.ones_like.
---@param dtype? cu.DType
---@param opts? cu.CreateOptions
---@return cu.Array
function Array:ones_like(dtype, opts) end

--- The method form of cu.full_like.
---@param value cu.Scalar
---@param dtype? cu.DType
---@param opts? cu.CreateOptions
---@return cu.Array
function Array:full_like(value, dtype, opts) end

--- The method form of cu.tril.
---@param opts? cu.TriangleOptions
---@return cu.Array
function Array:tril(opts) end

--- The method form of cu.triu.
---@param opts? cu.TriangleOptions
---@return cu.Array
function Array:triu(opts) end

--- The method form of cu.take.
---@param indices cu.Array
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function Array:take(indices, opts) end

--- The method form of cu.take_along_axis.
---@param indices cu.Array
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function Array:take_along_axis(indices, opts) end

--- The method form of cu.vecdot.
---@param b cu.Array
---@param opts? cu.AxisStreamOptions
---@return cu.Array
function Array:vecdot(b, opts) end

--- The method form of cu.outer.
---@param b cu.Array
---@param opts? cu.StreamOption
---@return cu.Array
function Array:outer(b, opts) end

--- The method form of cu.tensordot.
---@param b cu.Array
---@param opts? cu.TensordotOptions
---@return cu.Array
function Array:tensordot(b, opts) end

-- ## Complex scalars

--- A complex number re + im*j: a scalar wherever one is accepted (cu.full, a[i] = z, arithmetic
--- with arrays makes them complex). Arithmetic + - * / ^ (with numbers too), unary -, tostring
--- ("1+2j"; the imaginary part's own sign once: "0-0j" for an imaginary part of -0.0, as numpy)
--- and == between two complex values (Lua never calls __eq for a number: z == 1 is false even
--- for cu.complex(1)).
---@param re number
---@param im? number default 0
---@return cu.Complex
function cu.complex(re, im) end

--- A complex scalar made by cu.complex(re, im) or read from a complex array.
---@class cu.Complex
---@field re number the real part
---@field im number the imaginary part
---@operator add(number|cu.Complex):cu.Complex
---@operator add(cu.Array):cu.Array
---@operator sub(number|cu.Complex):cu.Complex
---@operator sub(cu.Array):cu.Array
---@operator mul(number|cu.Complex):cu.Complex
---@operator mul(cu.Array):cu.Array
---@operator div(number|cu.Complex):cu.Complex
---@operator div(cu.Array):cu.Array
---@operator pow(number|cu.Complex):cu.Complex
---@operator pow(cu.Array):cu.Array
---@operator unm:cu.Complex
local Complex = {}

--- The modulus |z| (a number).
---@return number
function Complex:abs() end

--- The complex conjugate.
---@return cu.Complex
function Complex:conj() end

-- ## Streams and events

--- A queue of device work, run in order (a worker thread per stream on the host backend). Work on
--- different streams may overlap. Supports `<close>` (releases the handle; queued work still runs).
---@class cu.Stream
---@field device integer the device the stream belongs to
---@field priority "high"|"normal"|"low"
---@field id integer a number identifying the stream (in traces)
local Stream = {}

--- Options of cu.stream.
---@class cu.StreamOptions
---@field priority? "high"|"normal"|"low" scheduling priority (default "normal")

--- Creates a stream on the current device.
---@param opts? cu.StreamOptions
---@return cu.Stream
function cu.stream(opts) end

--- The current stream: where operations without stream= go.
---@return cu.Stream
function cu.current_stream() end

--- Makes s the current stream until the returned scope is closed:
--- `do local _ <close> = cu.use_stream(s) ... end`. A scope dropped without `<close>` leaves s
--- current. Scopes form a stack: one closed while a scope opened after it is still open (a
--- coroutine ending) changes nothing until that one closes, which then restores what was current
--- before both; the current stream is always that of the innermost open scope.
---@param s cu.Stream
---@return cu.StreamScope
function cu.use_stream(s) end

--- What cu.use_stream returns: closing it (`<close>`) makes the previous stream current again.
---@class cu.StreamScope

--- Waits until all work queued on the stream has finished (an explicit synchronization).
function Stream:sync() end

--- True when all work queued on the stream has finished; never waits.
---@return boolean
function Stream:done() end

--- Makes the stream's later work wait for an event, or for the work queued so far on another
--- stream. The host does not wait. Returns the stream.
---@param x cu.Event|cu.Stream
---@return cu.Stream self
function Stream:wait(x) end

--- A marker in a stream: record it, then wait for it or measure the time between two of them.
--- `e2 - e1` is the milliseconds from e1 to e2 (waits for both). Supports `<close>`.
---@class cu.Event
---@field recorded boolean true once recorded
---@field timing boolean whether it can time (cu.event{timing=false} cannot)
---@field device integer the device it belongs to
---@operator sub(cu.Event):number
local Event = {}

--- Options of cu.event.
---@class cu.EventOptions
---@field timing? boolean record timestamps (default true; false is lighter for pure dependencies)

--- Creates an event on the current device.
---@param opts? cu.EventOptions
---@return cu.Event
function cu.event(opts) end

--- Records the event on stream s (default: the current stream): it completes when the work queued
--- before it has finished. Asynchronous. Returns the event.
---@param s? cu.Stream
---@return cu.Event self
function Event:record(s) end

--- Waits until the event has completed (an explicit synchronization).
function Event:sync() end

--- True when the event has completed; never waits.
---@return boolean
function Event:done() end

--- Milliseconds of device time from this event to `stop` (waits for both). Both must be recorded
--- timing events.
---@param stop cu.Event
---@return number
function Event:elapsed(stop) end

-- ## Graphs

--- A captured graph (cu.graph): the work a function queues, recorded once and launched many times
--- with one launch call each. Keeps alive every array its work reads or writes (freeing one is an
--- error naming the graph) and the arrays created inside the function, which keep their memory,
--- address and contents from one launch to the next. Supports `<close>`.
---@class cu.Graph
---@field nodes integer operations in the graph (graph nodes on CUDA)
---@field instantiate_ms number host milliseconds of the latest instantiation
---@field capture_ms number host milliseconds of the latest capture (running the function)
---@field launches integer launches so far
---@field updates integer updates applied in place (g:update returned "updated")
---@field reinstantiations integer updates that instantiated anew
---@field device integer the device it runs on
---@field name string from the name option, else "file.lua:line" where the function was defined
---@field site string "file.lua:line" where it was captured
---@field arrays integer arrays (buffers) the graph keeps alive
---@field bytes integer their memory in bytes
---@field ops string[] the names of the captured operations, in the order they were queued
---@field ledger cu.Ledger the counts one launch adds to cu.ledger()
---@field freed boolean true after g:free()
local Graph = {}

--- Options of cu.graph. The array part holds the function's arguments: `cu.graph(fn, {x, 2})`
--- captures fn(x, 2).
---@class cu.GraphOptions
---@field stream? cu.Stream the stream captured on (default: the current one); current while fn runs
---@field name? string the graph's name in messages, traces and cu.bench
---@field fuse? boolean record fn's elementwise operations and capture them as groups (cu.fuse): on CUDA one generated kernel node per group
---@field scratch? cu.Array[] with fuse: arrays whose values after a launch do not matter; a generated kernel computes values written into them without storing those that nothing later in fn reads (also at g:update)

--- Runs fn once under stream capture and instantiates what it queued: built-in operations,
--- reductions, random numbers, cu.matmul/cu.dot (cuBLAS with a workspace of the graph's own),
--- cu.compile kernels and cu.elementwise/cu.reduction templates, copies between device arrays and
--- to or from pinned host memory, cu.sleep, and work on other streams that join through events
--- (s2:wait(e) for an event e recorded inside; they must join back before fn returns). Nothing
--- runs during the capture: scalars are captured as they are (a value that changes per launch
--- belongs in a device array), and random numbers are drawn with the counter at capture, the same
--- at every launch. Anything that waits for or reads the device (a[i], :item(), :totable(),
--- tostring, pageable copies, cu.sync, s:sync, e:sync, :done(), cu.clock, cu.time) or computes on
--- host memory raises naming the operation and the line, and ends the capture cleanly.
---@param fn fun(...)
---@param opts? cu.GraphOptions
---@return cu.Graph
function cu.graph(fn, opts) end

--- Options of cu.fuse.
---@class cu.FuseOptions
---@field explain? boolean write each flush's groups (their operations, shape and why each ended)
---@field generate_single? boolean a group of one operation runs as a generated kernel too (default: the precompiled kernel, which needs no compile)
---@field replay? boolean pure functions only: a call whose arguments match an earlier call's (arrays, tables and strings the same, numbers, booleans and cu.complex equal) on the same stream launches the graph that call was captured into, without running fn, and returns that call's results
---@field scratch? cu.Array[] arrays whose values after a call do not matter (a step's temporaries): a generated kernel computes values written into them without storing those that nothing later in the call reads (kept alive by the function; one freed raises at the next call)

--- cu.fuse(fn[, opts]) returns a function that runs fn(...) as ordinary Lua with its elementwise
--- operations (arithmetic, comparisons, math functions, cu.where, out= targets) recorded instead
--- of queued, then runs them as groups when fn returns: a run of operations on one stream over one
--- shape, in which memory written is read again only through the identical view, is one generated
--- kernel on a CUDA device (bit-identical results) and one pass over its elements on the host
--- backend. 0-d operations on 0-d values just before a group are its prologue (every element
--- recomputes them); a reduction (any of them, whole-array or along axes) of a value of the
--- group's shape is its epilogue (a second kernel combines the partial results), then, after a
--- whole-array one, 0-d operations on the result; a reduction that cannot end a group is recorded
--- too and runs as the built-in one in its place. Anything else (a copy, :item(), an element read,
--- a sync, an event, a free) first runs what was recorded, so results are those of eager code. A Lua error inside fn
--- runs what was recorded and is raised again. CULUA_FUSE=0 runs fn eagerly; cu.ledger() counts
--- fused_ops and fused_groups. See docs/fusion.md.
---@class cu.fuse
---@overload fun(fn: fun(...): ..., opts?: cu.FuseOptions): fun(...): ...
cu.fuse = {}

--- Runs fn(...) as a fused function does and returns the CUDA source of each group of several
--- operations it ran (each complete: culua's functor prelude and the generated kernel), also on
--- the host backend.
---@param fn fun(...)
---@param ... any fn's arguments
---@return string[]
function cu.fuse.source(fn, ...) end

--- Forgets the calls a function made by cu.fuse(fn, {replay = true}) recorded: their graphs, and
--- the arrays the graphs kept alive (an array a graph uses cannot be freed). Its next calls record
--- afresh. Returns how many it forgot (0 for a fused function without replay).
---@param f function a function returned by cu.fuse
---@return integer
function cu.fuse.reset(f) end

--- Queues one launch on stream s (default: the current stream), ordered after the allocation of
--- every array the graph uses. Asynchronous. Returns the graph.
---@param s? cu.Stream
---@return cu.Graph self
function Graph:launch(s) end

--- Queues n launches from one call (no Lua per launch). Returns the graph.
---@param n integer
---@param s? cu.Stream
---@return cu.Graph self
function Graph:replay(n, s) end

--- Captures fn again (on the graph's stream; the array part of `args` holds fn's arguments) and
--- updates the instantiated graph in place when the topology is the same (new scalars, other
--- arrays of the same shapes: cudaGraphExecUpdate), else instantiates it anew. The arrays of the
--- new capture replace the old ones. A capture that fails leaves the graph as it was.
---@param fn fun(...)
---@param args? table
---@return "updated"|"reinstantiated"
function Graph:update(fn, args) end

--- Destroys the graph (launches already queued complete) and lets go of its arrays. Idempotent.
function Graph:free() end

-- ## Run-time kernels

--- Options of cu.compile.
---@class cu.CompileOptions
---@field name? string the program's file name in messages (default "kernel.cu")
---@field options? string|string[] NVRTC options, such as {"-use_fast_math"}
---@field include_paths? string|string[] folders searched by #include (part of the cache key)
---@field name_expressions? string|string[] template instantiations to compile now, such as {"scale<float>"}
---@field cache? boolean use the on-disk compile cache (default true)

--- Compiles CUDA C++ with NVRTC for the current GPU and returns a module whose kernels are its
--- fields (m.saxpy). Compile errors raise with NVRTC's log mapped to script lines. Cached on disk
--- ($CULUA_CACHE_DIR, else ~/.cache/culua). On the host backend this is an error: run-time
--- kernels need a GPU.
---@param source string CUDA C++ with __global__ functions
---@param opts? cu.CompileOptions
---@return cu.Module
function cu.compile(source, opts) end

--- A compiled program (cu.compile). m.NAME or m:kernel("NAME<T>") gives a kernel; templates are
--- instantiated on demand.
---@class cu.Module
---@field info cu.ModuleInfo how the compile went
---@field kernels string[] the __global__ functions found in the source ("scale<typename T>" for templates)
---@field name string the program's name
---@field source string the source as given
---@field [string] cu.Kernel
local Module = {}

--- The kernel named by `expression`: a kernel name, or a template instantiation such as
--- "scale<double>" (compiled now when new). Unknown names are errors listing the module's kernels.
---@param expression string
---@return cu.Kernel
function Module:kernel(expression) end

--- What m.info holds.
---@class cu.ModuleInfo
---@field name string
---@field cache "hit"|"miss"|"off" whether the compile came from the on-disk cache
---@field compile_ms number compile time
---@field elapsed_ms number the whole call
---@field arch string such as "sm_90"
---@field log string the compiler's messages
---@field ptx boolean true when the module was loaded as PTX
---@field cache_file? string the cache entry

--- A kernel of a module. Call it as k(cfg, args...) (or k:launch(cfg, args...)): the launch is
--- queued (asynchronous). Arguments are checked against the declaration: pointers take live,
--- contiguous device arrays of a matching dtype; scalars take numbers converted exactly.
---@class cu.Kernel
---@field name string the expression it was made from
---@field symbol string the mangled name
---@field signature string the declaration, such as "saxpy(float a, const float* x, float* y, int n)"
---@field params cu.KernelParam[] each parameter's name and type
---@field attributes cu.KernelAttributes registers, shared memory and limits on the current device
---@overload fun(cfg:cu.LaunchConfig,...:any)
local Kernel = {}

--- Launches the kernel with configuration cfg and its arguments (exactly as many as it has
--- parameters). Queued on cfg.stream or the current stream (asynchronous). The same as k(cfg, ...).
---@param cfg cu.LaunchConfig
---@param ... any the kernel's arguments
function Kernel:launch(cfg, ...) end

--- The kernel with its launch configuration read and checked once: kc(args...) launches it, the
--- cheapest launch from Lua.
---@param cfg cu.LaunchConfig
---@return cu.ConfiguredKernel
function Kernel:configure(cfg) end

--- Theoretical occupancy of a block size (and dynamic shared memory) on the current device.
---@param block integer threads per block
---@param shared? integer dynamic shared memory in bytes (default 0)
---@return cu.Occupancy
function Kernel:occupancy(block, shared) end

--- The block size (a multiple of the warp size) with the highest occupancy; the largest of equals.
---@param shared? integer dynamic shared memory in bytes (default 0)
---@return integer
function Kernel:best_block(shared) end

--- A launch configuration.
---@class cu.LaunchConfig
---@field grid integer|integer[] blocks: a number or 1 to 3 numbers
---@field block integer|integer[] threads per block: a number or 1 to 3 numbers (at most 1024 threads)
---@field shared? integer dynamic shared memory in bytes (past 48 KiB the limit is raised for you)
---@field stream? cu.Stream the stream to launch on (default: the current one)

--- A kernel with its configuration bound (k:configure(cfg)): kc(args...) launches it (queued).
---@class cu.ConfiguredKernel
---@overload fun(...:any)

--- A kernel parameter, in k.params.
---@class cu.KernelParam
---@field name string
---@field type string the type as the compiler reports it

--- What k.attributes holds.
---@class cu.KernelAttributes
---@field registers integer per thread
---@field max_threads_per_block integer
---@field static_shared integer bytes
---@field local integer bytes per thread
---@field constant integer bytes
---@field max_dynamic_shared integer bytes
---@field ptx_version integer
---@field binary_version integer

--- What k:occupancy() returns.
---@class cu.Occupancy
---@field blocks_per_sm integer
---@field active_warps integer per SM
---@field max_warps integer per SM
---@field occupancy number active_warps / max_warps

--- Options of cu.elementwise.
---@class cu.ElementwiseOptions
---@field name? string the kernel's name in messages (default "elementwise")
---@field preamble? string CUDA C++ placed before the kernel (helper functions)
---@field options? string[] NVRTC options, such as {"--fmad=false"}

--- An elementwise kernel in the manner of CuPy's ElementwiseKernel: the signature names the typed
--- inputs and outputs ("f32 x, f32 y -> f32 z"; T is the arrays' dtype; `raw` inputs are indexed
--- by the body), the body is CUDA C++ for one element (i is its flat index, n the count). Compiled
--- per dtype combination and layout on first call (cached); calls broadcast as numpy and are
--- queued. Needs a GPU to run.
---@param signature string
---@param body string
---@param opts? cu.ElementwiseOptions
---@return cu.ElementwiseKernel
function cu.elementwise(signature, body, opts) end

--- The parts of a reduction kernel (cu.reduction).
---@class cu.ReductionSpec
---@field map? string the value of one element (default: the single input)
---@field reduce string combines two accumulators a and b, such as "a + b"
---@field identity string|number the accumulator's start value
---@field post? string from the accumulator a to the output (default "y = a")
---@field acc? string the accumulator dtype (default: the output's)
---@field preamble? string CUDA C++ placed before the kernels
---@field name? string the kernel's name in messages (default "reduction")
---@field options? string[] NVRTC options

--- A reduction kernel in the manner of CuPy's ReductionKernel: map each element, combine with
--- reduce, finish with post. Compiled on first call per specialization; calls take axis= (one or a
--- list), keepdims=, out=, stream= and are queued. Needs a GPU to run.
---@param signature string such as "f32 x -> f32 y"
---@param spec cu.ReductionSpec
---@return cu.ReductionKernel
function cu.reduction(signature, spec) end

--- What cu.elementwise returns: call it with the inputs (arrays or numbers) and an optional
--- {out=, stream=}; returns the outputs (out= ones when given).
---@class cu.ElementwiseKernel
---@field name string
---@field signature string
---@field specializations integer compiled so far
---@field info cu.TemplateInfo
---@overload fun(...:cu.Operand|cu.TemplateCallOptions):cu.Array

--- What cu.reduction returns: call it with the inputs and an optional {axis=, keepdims=, out=,
--- stream=}; returns the outputs.
---@class cu.ReductionKernel
---@field name string
---@field signature string
---@field specializations integer compiled so far
---@field info cu.TemplateInfo
---@overload fun(...:cu.Operand|cu.TemplateReduceOptions):cu.Array

--- Options of a call of a cu.elementwise kernel.
---@class cu.TemplateCallOptions
---@field out? cu.Array|cu.Array[] the output array, or one per output
---@field stream? cu.Stream

--- Options of a call of a cu.reduction kernel.
---@class cu.TemplateReduceOptions
---@field axis? integer|integer[] the dimensions to reduce (1-based; default all)
---@field keepdims? boolean
---@field out? cu.Array|cu.Array[]
---@field stream? cu.Stream

--- What t.info holds for an elementwise or reduction kernel.
---@class cu.TemplateInfo
---@field specializations integer
---@field cache_hits integer compiles found in the on-disk cache
---@field cache_misses integer
---@field compile_ms number

-- ## Measurement

--- Options of cu.time.
---@class cu.TimeOptions
---@field stream? cu.Stream the stream to record the events on (default: the current one)

--- Calls fn() between two events recorded on the stream, waits for the second, and returns the
--- device milliseconds between them: the right way to time asynchronous work (a host clock sees
--- only the queueing).
---@param fn fun()
---@param opts? cu.TimeOptions
---@return number # milliseconds
function cu.time(fn, opts) end

--- Options of cu.clock.
---@class cu.ClockOptions
---@field warn? boolean warn when device work is still queued (default true)

--- Host seconds from a steady clock. Prints a warning on stderr (once per call site) when read
--- while device work is still queued, as os.clock() does in culua: that time excludes the work.
--- cu.clock{warn = false} reads it silently.
---@param opts? cu.ClockOptions
---@return number # seconds
function cu.clock(opts) end

--- Transfer, synchronization and allocation counts since the start (no argument), or those of one
--- call of fn. Ledgers subtract (after - before) and print.
---@param fn? fun()
---@return cu.Ledger
function cu.ledger(fn) end

--- The counts of cu.ledger().
---@class cu.Ledger
---@field h2d_bytes integer host to device bytes
---@field d2h_bytes integer device to host bytes
---@field d2d_bytes integer device to device bytes
---@field h2d_calls integer
---@field d2h_calls integer
---@field d2d_calls integer
---@field pageable_bytes integer host side of host-device copies in pageable memory
---@field pageable_calls integer
---@field pinned_bytes integer host side of host-device copies in pinned memory
---@field pinned_calls integer
---@field p2p_bytes integer bytes moved between two devices (peer to peer or staged); packing a strided source or converting on the destination adds device copies counted in d2d_bytes
---@field p2p_calls integer copies between two devices
---@field syncs integer every host wait (explicit and implicit)
---@field implicit_syncs integer waits the script did not ask for (a[i], :item(), pageable copies...)
---@field allocs integer arrays and host memory allocated
---@field alloc_bytes integer
---@field launches integer operations queued on streams (a graph launch adds its operations)
---@field graph_launches integer launches of graphs
---@field nccl_calls integer NCCL operations queued (cu.nccl: one per rank of this process)
---@field nccl_bytes integer bytes of their inputs (each rank's array; send/recv: the buffer)
---@field fused_ops integer elementwise operations cu.fuse recorded
---@field fused_groups integer the groups they ran as (each one pass over its elements)
---@field fused_kernels integer generated kernel launches (CUDA; a group with a reduction launches two)
---@field fused_compiles integer generated kernels compiled by NVRTC
---@field fused_compile_us integer NVRTC's time for them, microseconds
---@field fused_disk_hits integer generated kernels found in the on-disk cache
---@field fused_memory_hits integer generated kernels already loaded (a repeated group)
---@field fused_early_flushes integer flushes before a fused function's end (something not recorded ran inside it; raises inside cu.strict)
---@operator sub(cu.Ledger):cu.Ledger

--- Calls fn(...) and raises at the first implicit synchronization inside it (an element read,
--- :item(), :totable(), tostring(a), a pageable copy, a pinned copy without stream=). Queued work
--- and explicit waits are allowed, except inside a fused function (cu.fuse): there anything that
--- runs its recorded operations before its end (an early flush, which splits its groups) raises,
--- after running them. Returns fn's results.
---@param fn function
---@param ... any fn's arguments
---@return any ...
function cu.strict(fn, ...) end

--- Runs fn(...) inside an NVTX range (seen by Nsight Systems) and a trace range; returns fn's
--- results.
---@param name string
---@param fn function
---@param ... any fn's arguments
---@return any ...
function cu.range(name, fn, ...) end

--- The timeline recorder: every operation on every stream with device timestamps, bytes and the
--- script line, written as Chrome trace JSON (open it in https://ui.perfetto.dev).
---@class cu.trace
cu.trace = {}

--- Options of cu.trace.start.
---@class cu.TraceOptions
---@field limit? integer the most operations recorded (default 1000000; later ones are dropped)

--- Starts recording (waits for the device first, so the timeline starts idle). Each traced
--- operation costs two event records: trace a representative part, not a benchmark loop. An error
--- when a trace is already recording.
---@param opts? cu.TraceOptions
function cu.trace.start(opts) end

--- Stops recording, writes the Chrome trace to `file` when given, and returns the summary. An error
--- when no trace was started.
---@param file? string
---@return cu.TraceSummary
function cu.trace.stop(file) end

--- Options of cu.trace.summary.
---@class cu.TraceSummaryOptions
---@field quiet? boolean do not print (default false)

--- Prints and returns the summary of the last (or running) trace: busy time per stream and the
--- fraction of the busy time when two or more streams ran at once.
---@param opts? cu.TraceSummaryOptions
---@return cu.TraceSummary
function cu.trace.summary(opts) end

--- True while a trace is recording.
---@return boolean
function cu.trace.recording() end

-- ## Notebooks

--- Shows each value under the running cell of a Jupyter notebook (culua --jupyter): as text,
--- and culua's values richly (an array as an HTML table of its elements, a bench or sweep result
--- as a table). Outside a kernel it prints the values as the REPL does. docs/guide/jupyter.md.
---@param ... any
function cu.display(...) end

-- ## Profiling

--- Options of cu.profile.
---@class cu.ProfileOptions
---@field limit? integer device rows kept (default 1e6; later ones are counted as dropped)
---@field print? boolean print the tables when fn returns (default false)

--- Runs fn and returns the profile of what it queued: every kernel, copy and fill that ran on the
--- device, with its device start and end (CUPTI's activity records on CUDA: a cuBLAS product or a
--- graph shows each of its kernels; the host streams' task times on the host backend), joined to
--- the script line that queued it. Waits for the device at the end. Inside another profile (or
--- culua --profile) it reports its own part of that recording. docs/profiling.md.
---@param fn fun()
---@param opts? cu.ProfileOptions
---@return cu.Profile
function cu.profile(fn, opts) end

--- What cu.profile returns. tostring(p) is the tables.
---@class cu.Profile
---@field backend string
---@field source string where the device rows came from
---@field span_ms number first device start to last device end
---@field busy_ms number time some row ran (per device, summed)
---@field idle_ms number span minus busy: the device waiting
---@field gaps integer idle intervals between rows
---@field device_ms number device time of all rows
---@field records integer rows
---@field operations integer operations culua queued
---@field dropped integer rows past the limit
---@field kernels cu.ProfileRow[] by kernel name, the largest total first
---@field lines cu.ProfileRow[] by script line, the largest total first
---@field largest_gaps {device:integer,at_ms:number,ms:number,after:string,before:string}[] up to 5
---@field rows cu.ProfileRecord[] every row, in device order
local Profile = {}

--- Prints the tables (the largest `top` rows of each, default 15; 0: all); returns p.
---@param top? integer
---@return cu.Profile
function Profile:print(top) end

--- The whole profile as JSON (summary, both tables, gaps, every row), or written to `file`
--- (returns p then).
---@param file? string
---@return string|cu.Profile
function Profile:json(file) end

--- One line per row as CSV (its fields and its script line), or written to `file` (returns p).
---@param file? string
---@return string|cu.Profile
function Profile:csv(file) end

--- A row of a profile's tables.
---@class cu.ProfileRow
---@field name? string by kernel: its name
---@field kind? string by kernel: "kernel", "copy", "memset"
---@field line? string by line: "script.lua:12"
---@field operations? string by line: the culua operations it queued
---@field calls integer
---@field total_ms number
---@field mean_us number
---@field min_us number
---@field max_us number
---@field share number of the device time of all rows
---@field idle_before_ms number device idle just before this row's work started

--- One thing that ran on the device.
---@class cu.ProfileRecord
---@field name string
---@field kind string
---@field device integer
---@field stream integer
---@field start_us number from the profile's first row
---@field end_us number
---@field duration_us number
---@field line string the script line that queued it ("" when none)
---@field operation? string the culua operation
---@field grid? integer[] kernels (CUDA)
---@field block? integer[]
---@field registers? integer per thread
---@field static_shared? integer bytes per block
---@field dynamic_shared? integer
---@field bytes? integer copies and fills
---@field graph? integer the graph it ran in

--- What cu.trace.stop and cu.trace.summary return.
---@class cu.TraceSummary
---@field span_ms number from the first operation's start to the last one's end
---@field busy_ms number time when any stream was busy
---@field overlap_ms number time when two or more streams were busy
---@field overlap number overlap_ms / busy_ms
---@field ops integer operations recorded
---@field dropped integer operations past the limit
---@field streams cu.TraceStream[] per stream
---@field text string the printed summary

--- One stream in a trace summary.
---@class cu.TraceStream
---@field name string
---@field device integer
---@field id integer
---@field busy_ms number
---@field ops integer
---@field bytes integer

-- ## Benchmarks

--- Options of cu.bench (see docs/bench.md).
---@class cu.BenchOptions
---@field name? string label in tostring(res) and the JSON (default "file.lua:line" of fn)
---@field warmup? integer calls thrown away before the first sample (default 1, at most 1e6)
---@field min_samples? integer cold samples before the noise may stop sampling (default 10, at most 1e6)
---@field min_time? number seconds of device time of the cold samples before stopping (default 0.5)
---@field max_time? number wall seconds that bound the whole bench: warmup, samples, hot batches past their minimum (default 5)
---@field noise? number target relative standard deviation (default 0.005)
---@field cold? boolean take cold samples, the L2 flushed before each (default true)
---@field hot? boolean also time back-to-back calls (default true)
---@field bytes? number bytes moved by one call of fn, for GBps
---@field flops? number floating-point operations of one call, for TFLOPs
---@field stream? cu.Stream the stream timed; current while fn runs
---@field graph? boolean also capture fn as a graph and time its launches: res.graph, res.graph_speedup
---@field counters? boolean|string[] hardware counters (CUDA; CUPTI's range profiler, fn replayed once per pass): true for culua's set, or a list of Nsight Compute metric names; res.counters, res.verdict, res.bound (docs/profiling.md)

--- Times fn (or the launches of a graph) as nvbench does: warm-up, cold samples (L2 flushed, the stream drained, fn's work held
--- behind a short gate so the events time the device alone), a noise-based stopping rule, hot
--- batches of back-to-back calls, and a launch-bound check. Waits for everything it timed. An
--- error inside fn propagates. Details: docs/bench.md.
---@param fn fun()|cu.Graph
---@param opts? cu.BenchOptions
---@return cu.BenchResult
function cu.bench(fn, opts) end

--- What cu.bench returns (times in milliseconds). tostring(res) is one line; res:json() the JSON.
---@class cu.BenchResult
---@field name string
---@field backend string
---@field device string the device's name
---@field device_index integer
---@field mode "cold"|"hot" where gpu, GBps and TFLOPs come from
---@field warmup integer
---@field samples integer cold samples taken
---@field gpu? cu.BenchStats device time per call
---@field cpu? cu.BenchStats host time per call (to the completion of its work)
---@field times number[] device time of every cold sample
---@field cpu_times number[] host time of every cold sample
---@field bytes? number as given
---@field flops? number as given
---@field GBps? number bytes / median device time (1 GB = 1e9 bytes)
---@field TFLOPs? number flops / median device time / 1e12
---@field hot? cu.BenchHot back-to-back calls
---@field launch_bound boolean the device sat waiting for the host
---@field gated? boolean cold device times were taken behind the gate
---@field stop? "noise"|"converged"|"max_time" why sampling stopped
---@field clock? {before:integer,after:integer} SM clock in MHz (NVML only)
---@field throttled? integer samples that ended throttled (NVML only)
---@field throttled_samples? integer[]
---@field throttle_reasons? string[]
---@field elapsed number wall seconds of the whole bench
---@field notes string[] launch-bound, throttling, a noise target not reached
---@field options cu.BenchSettings the settings used
---@field graph? cu.BenchResult with {graph=true}: the same function timed as a graph
---@field graph_speedup? number with {graph=true}: eager gpu median / graph gpu median
---@field graph_nodes? integer with {graph=true}: the nodes of that graph
---@field counters? cu.BenchCounters with {counters=...}: what the hardware counted
---@field verdict? string with {counters=...}: memory-, compute- or latency-bound, with the share of the peak that decided it
---@field bound? "memory"|"compute"|"latency" with {counters=...}: the verdict's word
local BenchResult = {}

--- Plots the result's point on the roofline of its device (a result with counters): the
--- measured DRAM bandwidth and each precision's FLOP peak as roofs. Needs gnuplot. Returns the file.
---@param opts string|{kind?:"roofline",file:string,title?:string} a file name (.png or .svg) or options
---@return string
function BenchResult:plot(opts) end

--- What cu.bench{counters=...} measured (shares are 0..1; rates over the benchmark's median
--- device time; NaN-valued figures are left out). docs/profiling.md.
---@class cu.BenchCounters
---@field metrics table<string, number> every metric asked for, as CUPTI evaluated it over the range
---@field unsupported string[] metrics the chip does not count
---@field passes integer how many times fn ran for the replay
---@field chip string "GH100"
---@field time_ms number the benchmark's device time per call (the time base)
---@field range_ms number the profiled range's duration (it also holds the profiler's own start and stop)
---@field dram_read_bytes? number
---@field dram_write_bytes? number
---@field dram_GBps? number (read + write) / time_ms
---@field dram_share? number dram_GBps / the measured copy peak
---@field dram_throughput? number DRAM throughput as a share of its peak (CUPTI's, rescaled to time_ms)
---@field sm_throughput? number SM "speed of light": share of peak
---@field memory_throughput? number memory "speed of light": share of peak
---@field occupancy? number achieved occupancy: active warps / the SM's maximum
---@field l1_hit_rate? number
---@field l2_hit_rate? number
---@field flops {fp64?:number,fp32?:number,fp16?:number} floating-point operations (an FMA counts 2)
---@field tensor_instructions? number tensor-pipe instructions (warp level; not FLOPs)
---@field TFLOPs? number all FLOPs / time_ms / 1e12
---@field flops_share? number the main precision's FLOP rate / its peak
---@field precision? string the precision with the most FLOPs
---@field intensity? number FLOPs per DRAM byte (the roofline's x)
---@field peaks {dram_GBps:number,dram_how:string,fp64_TFLOPs?:number,fp32_TFLOPs?:number,fp16_TFLOPs?:number,flops_how:string} the device's peaks, and where each came from

--- The whole result as JSON (tables with keys 1..n become arrays).
---@param indent? integer spaces per level (default: one line)
---@return string
function BenchResult:json(indent) end

--- Statistics of a list of times (milliseconds).
---@class cu.BenchStats
---@field min number
---@field median number
---@field mean number
---@field stddev number sample standard deviation (n - 1)
---@field p10 number
---@field p90 number
---@field max number
---@field noise number stddev / mean

--- The hot measurement of cu.bench.
---@class cu.BenchHot
---@field gpu cu.BenchStats device time per call
---@field cpu_enqueue number host time per call to issue a batch
---@field gpu_queued? number device time per call with the work queued ahead (nil when fn waits)
---@field batch_size integer calls per batch
---@field batches integer
---@field times number[] device time per call of each batch
---@field GBps? number
---@field TFLOPs? number

--- The settings cu.bench used (res.options).
---@class cu.BenchSettings
---@field warmup integer
---@field min_samples integer
---@field min_time number
---@field max_time number
---@field noise number
---@field cold boolean
---@field hot boolean

-- ## Sweeps and plots

--- The argument of cu.sweep (see docs/sweep.md).
---@class cu.SweepSpec
---@field name? string default "sweep"
---@field axes table a list of {name, values} pairs, or a map {name = values}
---@field run fun(p:table):any called for each point with its parameters; returns a bench result, a number (ms), a table or nil
---@field order? string[] the order of the axes of a map
---@field quiet? boolean no table on stdout
---@field json? string write the results as JSON (else the CLI's --json)
---@field csv? string write the results as CSV (else the CLI's --csv)
---@field plot? string|cu.PlotOptions plot the sweep (a file name or options)
---@field distribute? boolean under mpirun, split the points round-robin over the ranks (one device per rank); rank 0 gets every row, prints and writes the files, the other ranks get their own rows. Without MPI (build or mpirun): every point runs here
---@field isolate? boolean run each point in a child process (its own CUDA context) that runs the script again up to this sweep: a point that crashes, faults the GPU, calls os.exit or times out is a failed row and the sweep goes on (docs/sweep.md#isolated-points). Needs a script run by the culua program (not the REPL or standard input); not with --sandbox or distribute under mpirun
---@field timeout? number with isolate = true: seconds a point may take; a child still running then is killed (its process group) and the point fails "timed out after N s (killed)". Default: no limit

--- Runs `run` for every point of the cartesian product of the axes (first axis outermost), prints a
--- markdown table and writes result files. A point whose run raises is recorded as failed and the
--- sweep goes on. Bad axes, options and unwritable files are errors before anything runs.
---@param spec cu.SweepSpec
---@return cu.SweepResults
function cu.sweep(spec) end

--- What cu.sweep returns. tostring(results) is the markdown table. The results are also the list
--- of their rows: `#results`, `results[i]` (`results.rows[i]`) and `ipairs(results)`.
---@class cu.SweepResults
---@field name string
---@field axes string[] the axis names in order
---@field rows table[] one per point: its parameters, status ("ok"/"failed"), error, and the fields run returned
---@field started string UTC start time
---@field seconds number wall time of the sweep
---@field interrupted boolean true when Ctrl-C ended the sweep
local SweepResults = {}

--- The result file's JSON text of this sweep.
---@return string
function SweepResults:json() end

--- The CSV text of this sweep.
---@return string
function SweepResults:csv() end

--- Writes the JSON to path (an error names the path).
---@param path string
function SweepResults:write_json(path) end

--- Writes the CSV to path.
---@param path string
function SweepResults:write_csv(path) end

--- Plots the sweep (x = the first axis, y = its metric, one series per value of the other axes,
--- unless opts say otherwise; kind = "roofline": each point with counters on the device's roofline); returns the file.
---@param opts string|cu.PlotOptions a file name or options
---@return string
function SweepResults:plot(opts) end

--- Options of cu.plot and plots of sweeps.
---@class cu.PlotOptions
---@field x? string field name or dotted path for the x axis
---@field y? string field name or dotted path ("gpu.median")
---@field series? string|string[] one line per value of these fields
---@field file? string .png or .svg
---@field logx? boolean logarithmic x (default: when positive x spans 100x or more)
---@field logy? boolean
---@field title? string
---@field xlabel? string
---@field ylabel? string
---@field kind? "lines"|"roofline" "roofline": each row's counters (cu.bench{counters=...}) against the device's roofs; x=, y= not needed

--- Plots rows (a list of tables, or sweep results) with gnuplot into a .png or .svg file; returns
--- the file. x=, y= and file= are required (checked in that order). Rows without a number at y
--- (failed points) or without a value at x are left out; NaN or an infinity at x or y is an error
--- naming the row (gnuplot cannot place it). Needs gnuplot on PATH. In a Jupyter kernel, without
--- file= the figure is shown under the cell (PNG and SVG) and nothing is returned.
---@param rows table[]|cu.SweepResults
---@param opts cu.PlotOptions
---@return string
function cu.plot(rows, opts) end

-- ## Tuning

--- The argument of cu.tune (see docs/tuning.md).
---@class cu.TuneSpec
---@field kernel function|cu.Kernel|string what a candidate runs: function(p) returning the function to time; a cu.Kernel (with launch= and args=); or a kernel name or template expression such as "scale<float, T>" (names of the space are substituted) of module= or of source=
---@field space table the parameters: a map {name = {values}} (sorted by name, or in order=) or a list of {name, values} pairs; values are numbers, strings, booleans or tables
---@field order? string[] the order of the parameters of a map
---@field args? any[]|fun(p:table):any[] the kernel's arguments (launched kernels), or a function of the parameters returning them; their dtypes and shapes are part of the cache key
---@field launch? cu.LaunchConfig|fun(p:table):cu.LaunchConfig the launch configuration of a kernel, or a function of the parameters returning it
---@field module? cu.Module the module whose kernel or template kernel= names
---@field source? string CUDA C++ compiled per candidate (cu.compile) with -DNAME=value for every parameter named in capitals and the parameter `options` as NVRTC options
---@field options? string|string[]|fun(p:table):string[] NVRTC options of source= (fixed, or a function of the parameters)
---@field check? fun(result:any, p:table):boolean?,string? called after one run of the candidate, before timing: result is what the timed function returned (kernel functions) or the args list after the launch (kernels; float outputs are NaN-filled first); false or nil (and a reason) rejects the candidate, an error fails it
---@field bench? cu.BenchOptions options of the cu.bench that times each candidate
---@field metric? string the bench result's field to minimize (default "gpu.median"; GBps, TFLOPs and GFLOPs are maximized)
---@field search? "exhaustive"|"random"|"descent" how candidates are chosen (default "exhaustive")
---@field budget? integer the most candidates to run (needed by "random")
---@field seed? integer the seed of search "random" (default 1; the same seed picks the same candidates)
---@field start? table the starting point of search "descent" (default: the middle value of each parameter)
---@field name? string the name in tables and of the sweeps (default: the kernel's name, or "tune")
---@field key? string what identifies the kernel in the cache key (default: the source text, template, kernel signature, or a Lua function's file and line)
---@field size? number|string|table the problem size, for the cache key (besides the args' dtypes and shapes)
---@field cache? boolean|string reuse and store the winner in a file: true for tune.json under $CULUA_CACHE_DIR (else $XDG_CACHE_HOME/culua, ~/.cache/culua), or a path (default false)
---@field isolate? boolean run each candidate in a child process (cu.sweep's isolate=)
---@field timeout? number seconds an isolated candidate may take (cu.sweep's timeout=)
---@field quiet? boolean no table on stdout
---@field json? string the rounds' sweeps written as JSON (else the CLI's --json)
---@field csv? string the rounds' sweeps written as CSV (else the CLI's --csv)
---@field plot? string|cu.PlotOptions plot the results (tbl:plot)

--- Finds the fastest configuration of a kernel: each candidate (a point of the space, chosen by
--- the search) is set up, run once and checked, then timed with cu.bench, all inside a point of
--- cu.sweep (isolate = true: in a child process, so a candidate that faults the GPU, exits or hangs
--- is a failed row). Returns the winning parameters and the table of every candidate. No candidate
--- passing is an error listing why. With cache=, a winner tuned before for the same device, driver,
--- culua version, kernel, problem size, space and search is returned at once.
---@param spec cu.TuneSpec
---@return table best the winning parameters (a fresh table: name = value)
---@return cu.TuneResults tbl every candidate's row
function cu.tune(spec) end

--- What cu.tune returns second. tostring(tbl) is the markdown table; tbl[i], #tbl and ipairs(tbl)
--- read the rows.
---@class cu.TuneResults
---@field name string
---@field axes string[] the parameter names in order
---@field rows cu.TuneRow[] one per candidate run, in the order they ran
---@field best cu.TuneRow the winning row
---@field best_index integer its index in rows
---@field search string the search used
---@field metric string the bench result's field compared
---@field key string the cache key (device, driver, culua version, kernel, problem size, space, search)
---@field cached boolean true when the winner came from the cache (rows are then those stored)
---@field cache_file? string the cache file (with cache=)
---@field tuned? string when the cached winner was tuned (UTC)
---@field rounds? integer the sweeps run (descent: one per parameter line)
---@field seconds? integer wall seconds of the search
local TuneResults = {}

--- The markdown table (the same as tostring).
---@return string
function TuneResults:markdown() end

--- The rows as plain tables: parameters (tables as text such as 16x16 unless raw), status,
--- metric, error, round.
---@param raw? boolean keep table parameters as tables
---@return table[]
function TuneResults:list(raw) end

--- The results as JSON text (name, search, metric, cached, best, rows).
---@return string
function TuneResults:json() end

--- Plots the metric of the ok rows (x = the first parameter, one line per value of the others,
--- unless opts say otherwise); returns the file.
---@param opts string|cu.PlotOptions a file name or options
---@return string
function TuneResults:plot(opts) end

--- A row of cu.tune's table: the candidate's parameters (name = value) and these fields.
---@class cu.TuneRow
---@field status "ok"|"rejected"|"failed" ok: checked and timed; rejected: the check said no; failed: it raised, crashed, faulted, timed out or did not compile
---@field metric? number the metric's value (ok rows)
---@field error? string why it was rejected or failed
---@field round? integer the sweep it ran in
---@field bench? table the sweep's row: the whole cu.bench result (ok rows)

-- ## JSON

--- JSON text to Lua values and back, for JSON lines printed by other programs and for files of
--- results: cu.json.decode(text), cu.json.encode(value [, {indent=n}]), cu.json.null.
---@class cu.json
---@field null lightuserdata JSON's null, from decode and for encode (nulls keep their places)
cu.json = {}

--- Options of cu.json.encode.
---@class cu.JsonEncodeOptions
---@field indent? integer pretty-print with this many spaces per level (0..16); default: one line

--- The JSON text of a value: tables with exactly the keys 1..n (n >= 1) become arrays, tables with
--- string keys objects (keys sorted by bytes, so the text is stable), the empty table {}. Integers
--- stay integers; floats get the shortest digits that read back to the same float, never written
--- as an integer (1.0, 1e+300). cu.json.null is null. Metatables are ignored (the raw contents
--- are encoded). One line unless indent is given. Errors name the value's place (".a.b[3]"): nil,
--- nan and inf, strings or keys that are not valid UTF-8, functions, userdata and threads, mixed
--- or non-string keys, arrays with holes (cu.json.null fills them), a table that contains itself,
--- nesting deeper than 200 levels.
---@param value any a table, string, number, boolean or cu.json.null
---@param opts? cu.JsonEncodeOptions
---@return string
function cu.json.encode(value, opts) end

--- The Lua value of JSON text: objects become tables with string keys, arrays sequences (1-based),
--- null cu.json.null, numbers integers when they are integers that fit 64 bits (1, -5,
--- 9223372036854775807) and floats otherwise (1.0, 1e300, 18446744073709551615). A repeated key
--- keeps its last value. Text that is not JSON (RFC 8259: no comments, no trailing commas, one
--- value), numbers beyond the float range and nesting deeper than 200 levels return nil and a
--- message naming the byte ("invalid JSON at byte 4: ..."). A non-string argument is an error.
---@param text string
---@return any|nil value
---@return string? message why text is not JSON
function cu.json.decode(text) end

-- ## MPI

--- MPI for scripts started by `mpirun -np N culua script.lua` (Open MPI; see docs/mpi.md). MPI
--- starts on first use (reading rank or size, or any call); without mpirun the job has one rank.
--- Lua values travel as themselves: nil, booleans, integers and floats (kept apart), strings,
--- tables without cycles, cu.Array values (dtype, shape and place travel with the data).
--- Functions, userdata other than arrays, threads and cycles are errors naming the place. Arrays
--- go straight from their memory where MPI can reach it (host arrays; device arrays on the host
--- backend or with a CUDA-aware MPI), else through pinned host memory. Collectives first exchange
--- a small header, so that arguments that differ across ranks (roots, ops, array dtypes and
--- shapes, a rank's invalid argument) raise the same error on every rank instead of hanging. On a
--- build without MPI every function except available() and initialized() raises, and so does
--- reading rank, size or local_rank. A script that ends with an error on one rank of several ends
--- the whole job (MPI_Abort; the CLI prints "[rank r]" before the message).
---@class cu.mpi
---@field rank integer this process's rank (0-based); reading it starts MPI
---@field size integer the number of ranks of the job (1 without mpirun)
---@field local_rank integer the rank among the processes of this node (which GPU to take)
cu.mpi = {}

--- Whether culua was built with MPI.
---@return boolean
function cu.mpi.available() end

--- Whether MPI is running (started by culua on first use, or by the application).
---@return boolean
function cu.mpi.initialized() end

--- Whether the MPI library reads and writes device memory itself (Open MPI's
--- MPIX_Query_cuda_support, asked at run time); otherwise device arrays are staged through pinned
--- host memory.
---@return boolean
function cu.mpi.cuda_aware() end

--- Waits until every rank has called it.
function cu.mpi.barrier() end

--- Options of cu.mpi.bcast.
---@class cu.MpiBcastOptions
---@field out? cu.Array the array that receives the root's array (v is left unchanged)

--- The root's value on every rank: a Lua value is returned (the other ranks' v is ignored). An
--- array at the root is copied into the array each rank gives (v, or out=; same dtype and shape,
--- else an error on every rank) and returned; a rank that gives no array gets a new one (the root's
--- dtype, shape and place).
---@param v any
---@param root? integer default 0
---@param opts? cu.MpiBcastOptions
---@return any
function cu.mpi.bcast(v, root, opts) end

--- Options of cu.mpi.allreduce.
---@class cu.MpiAllreduceOptions
---@field op? "sum"|"prod"|"max"|"min" default "sum"
---@field out? cu.Array the result of an array reduction (v is left unchanged)

--- Reduces over all ranks. Numbers give a number (an integer when every rank gives an integer,
--- else a float). Arrays (the same dtype and shape on every rank) are reduced in place, or into
--- out=, and returned; f16, bf16 and bool arrays cannot be reduced by MPI (convert them), max and
--- min are not defined for complex ones.
---@param v number|cu.Array
---@param opts? cu.MpiAllreduceOptions
---@return number|cu.Array
function cu.mpi.allreduce(v, opts) end

--- Every rank's value at the root, as a list (rank r at index r + 1); nil on the other ranks.
---@param v any
---@param root? integer default 0
---@return any[]|nil
function cu.mpi.gather(v, root) end

--- Sends v (any value cu.mpi carries) to rank dest. Blocking (MPI_Send): a large message waits for
--- the matching recv.
---@param v any
---@param dest integer
---@param tag? integer 0.. MPI's upper bound (at least 32767); default 0
function cu.mpi.send(v, dest, tag) end

--- Options of cu.mpi.recv.
---@class cu.MpiRecvOptions
---@field out? cu.Array where an array arrives (the sender's dtype and shape, else an error once the message is received)

--- Receives the next value sent to this rank by src with tag; returns it, its source and its tag.
--- Arrays arrive in out= when given, else as new arrays in the place they were sent from (device
--- arrays on the current device).
---@param src integer|"any"
---@param tag? integer|"any" default 0
---@param opts? cu.MpiRecvOptions
---@return any value
---@return integer source
---@return integer tag
function cu.mpi.recv(src, tag, opts) end

--- Ends every rank of the job (MPI_Abort) after printing the message on stderr.
---@param message? string
---@param code? integer exit status, default 1
function cu.mpi.abort(message, code) end

-- ## Help

--- Options of cu.help.
---@class cu.HelpOptions
---@field text? boolean return the text instead of printing it

--- Describes a cu function, method, type or object, from this annotation file: cu.help(cu.zeros),
--- cu.help("zeros"), cu.help("Array:sum"), cu.help(a) for an array (its shape, dtype and methods),
--- cu.help(s) for a stream; cu.help() lists everything by group. Prints and returns nothing (the
--- REPL shows no value); with {text=true} returns the text instead. Unknown names give a message,
--- not an error. In culua the global help is the same function.
---@param x? any a function, object, or name such as "zeros", "cu.host.zeros", "Array:sum"
---@param opts? cu.HelpOptions
---@return string? # the text, with {text=true}
function cu.help(x, opts) end

--- The same as cu.help (a global of the culua program, not of `require "cu"`).
---@param x? any
---@param opts? cu.HelpOptions
---@return string?
function help(x, opts) end

-- ## NCCL collectives (cu.nccl)

--- NCCL collectives between GPUs: libnccl.so.2 from the CUDA toolkit, loaded on first use
--- (CULUA_NCCL_LIBRARY names another file). Present on every build; where NCCL cannot run (the
--- host backend, a build without CUDA, no libnccl.so.2) cu.nccl.available() returns false and the
--- reason, and cu.nccl.comm raises it. NVLink multicast stays off (NCCL_NVLS_ENABLE=0) unless the
--- environment sets it.
---@class cu.nccl
cu.nccl = {}

--- Can NCCL run here? true, or false and why not.
---@return boolean
---@return string? # why not
function cu.nccl.available() end

--- NCCL's version, such as "2.28.3" (loads the library).
---@return string
function cu.nccl.version() end

--- Options of cu.nccl.comm.
---@class cu.NcclCommOptions
---@field timeout? number seconds: a nonblocking communicator whose creation, calls and comm:sync() give up after this long (a rank missing, arrays that differ across ranks), abort it and raise instead of hanging

--- A communicator for one process driving several GPUs, one rank per device (rank i is devices[i],
--- 0-based ranks). Created collectively (ncclCommInitRank for each device in one group).
---@param devices? integer|integer[] device indices (0-based), default all devices
---@param opts? cu.NcclCommOptions
---@return cu.NcclComm
function cu.nccl.comm(devices, opts) end

--- Options of cu.nccl.comm_world.
---@class cu.NcclWorldOptions
---@field device? integer this rank's device (0-based); default: the rank on this node (cu.mpi.local_rank) modulo the number of devices
---@field timeout? number seconds, as for cu.nccl.comm

--- A communicator with one rank per MPI process (`mpirun -np N culua script.lua`): rank r of
--- cu.mpi.size is this process on its device, which becomes the current device (arrays made
--- afterwards live there). Rank 0 makes NCCL's id and MPI broadcasts it; every rank must call it.
--- Needs a build with MPI (cu.mpi.available()); without mpirun it is a communicator of one rank.
---@param opts? cu.NcclWorldOptions
---@return cu.NcclComm
function cu.nccl.comm_world(opts) end

--- A NCCL communicator (cu.nccl.comm). Every collective takes a list with one device array per
--- device of the communicator, in its order (a single array for a one-device communicator, and
--- then returns a single array), checks them all before queueing (on the right device, contiguous,
--- equal sizes and dtypes, outputs of the right size) and queues asynchronously on stream= or on
--- each device's current stream: no synchronization. Collectives are captured by cu.graph (run
--- one eagerly first: NCCL sets up its connections on first use), shown in traces as
--- "nccl.allreduce" etc. and counted by cu.ledger() (nccl_calls, nccl_bytes). Reductions take
--- op= "sum" (default), "prod", "max", "min" or "avg"; complex arrays reduce with sum and avg only;
--- bool and i16 arrays cannot be reduced but move (broadcast, allgather, send/recv) as any dtype.
--- Supports `<close>`; collected without :free(), a communicator is retired (the collector never
--- waits) and destroyed by the next new communicator, comm:free() or comm:sync() once idle.
---@class cu.NcclComm
---@field size integer ranks in all
---@field rank integer the rank of the first device of this process (0 for cu.nccl.comm)
---@field devices integer[] the device of each rank of this process
---@field freed boolean true after comm:free()
local NcclComm = {}

--- Options of the reducing collectives.
---@class cu.NcclReduceOptions
---@field op? "sum"|"prod"|"max"|"min"|"avg" default "sum"
---@field out? cu.Array|cu.Array[] output arrays, one per device (default: in place, or allocated for allgather and reducescatter)
---@field stream? cu.Stream|cu.Stream[] one stream, or one per device (default: each device's current stream)
---@field root? integer reduce: the rank that receives the result (default 0)

--- Options of broadcast and allgather.
---@class cu.NcclMoveOptions
---@field out? cu.Array|cu.Array[] output arrays, one per device (default: in place for broadcast, allocated for allgather)
---@field stream? cu.Stream|cu.Stream[] one stream, or one per device
---@field root? integer broadcast: the rank whose array is sent (default 0)

--- Options of send and recv.
---@class cu.NcclPeerOptions
---@field peer integer|integer[] the rank to send to / receive from, or one per device
---@field stream? cu.Stream|cu.Stream[] one stream, or one per device

--- Every rank gets the reduction of all ranks' arrays (in place without out=).
---@param arrays cu.Array|cu.Array[]
---@param opts? cu.NcclReduceOptions
---@return cu.Array|cu.Array[] # the outputs
function NcclComm:allreduce(arrays, opts) end

--- The rank root gets the reduction of all ranks' arrays (in place without out=; other ranks'
--- outputs are left as they are).
---@param arrays cu.Array|cu.Array[]
---@param opts? cu.NcclReduceOptions
---@return cu.Array|cu.Array[]
function NcclComm:reduce(arrays, opts) end

--- Every rank gets the array of rank root (in place without out=).
---@param arrays cu.Array|cu.Array[]
---@param opts? cu.NcclMoveOptions
---@return cu.Array|cu.Array[]
function NcclComm:broadcast(arrays, opts) end

--- Every rank gets all ranks' arrays one after another: outputs of size times the input's elements
--- (allocated with shape {size, ...input shape} without out=).
---@param arrays cu.Array|cu.Array[]
---@param opts? cu.NcclMoveOptions
---@return cu.Array|cu.Array[]
function NcclComm:allgather(arrays, opts) end

--- The reduction of all ranks' arrays, split in size parts: rank r gets part r. Inputs must have
--- a multiple of size elements; outputs have 1/size of them (allocated without out=: the first
--- dimension divided when it divides, else flat).
---@param arrays cu.Array|cu.Array[]
---@param opts? cu.NcclReduceOptions
---@return cu.Array|cu.Array[]
function NcclComm:reducescatter(arrays, opts) end

--- Sends each device's array to its peer rank (peer=, required). Between ranks of this process the
--- matching recv must be in the same comm:group.
---@param arrays cu.Array|cu.Array[]
---@param opts cu.NcclPeerOptions
function NcclComm:send(arrays, opts) end

--- Receives into each device's array from its peer rank (peer=, required); returns the arrays.
---@param arrays cu.Array|cu.Array[]
---@param opts cu.NcclPeerOptions
---@return cu.Array|cu.Array[]
function NcclComm:recv(arrays, opts) end

--- Runs fn; the collectives it queues on this communicator form one NCCL group
--- (ncclGroupStart/End), launched together when fn returns: needed for send/recv pairs between
--- ranks of this process.
---@param fn fun()
function NcclComm:group(fn) end

--- Waits for the work queued on the communicator's streams (an explicit synchronization). With a
--- timeout, gives up after it, aborts the communicator and raises.
function NcclComm:sync() end

--- Waits for the communicator's queued work and destroys it; later use is an error. Idempotent.
--- Raises while a graph captured with it is alive (free the graph first).
function NcclComm:free() end

-- ## Fourier transforms (cu.fft) and data-type functions

--- Discrete Fourier transforms as numpy.fft (the Array API standard's fft extension) on device
--- arrays: cuFFT on the GPU (loaded at run time, plans cached per shape), kissfft on the host
--- backend. f16, bf16, f32 and c64 input computes in f32 and gives c64 (f32 for irfft/hfft); f64,
--- c128, integers and bool compute in f64 and give c128 (f64). Results are new contiguous arrays;
--- inputs are cropped or zero-padded to n points, non-contiguous ones copied first. Queued.
---@class cu.fft
cu.fft = {}

--- Options of the 1-D transforms (cu.fft.fft, ifft, rfft, irfft, hfft, ihfft).
---@class cu.FftOptions
---@field n? integer points of the transform (default: the axis's length; for irfft and hfft 2*(m-1)); the input is cropped or zero-padded
---@field axis? integer the axis to transform (1-based, negative from the end; default -1)
---@field norm? "backward"|"ortho"|"forward" the scaling: backward (default) divides the inverse by n, ortho both by sqrt(n), forward the forward one by n
---@field stream? cu.Stream the stream to queue on

--- Options of the n-D transforms (cu.fft.fftn, ifftn, rfftn, irfftn, fft2, ifft2, rfft2, irfft2).
---@class cu.FftnOptions
---@field s? integer[] points per transformed axis (-1: the axis's length; for irfftn's last axis 2*(m-1)); alone it picks the last #s axes
---@field axes? integer|integer[] the axes to transform, distinct (default: all; the last two for the *2 functions)
---@field norm? "backward"|"ortho"|"forward" the scaling, over the product of the lengths
---@field stream? cu.Stream the stream to queue on

--- Options of cu.fft.fftshift and cu.fft.ifftshift.
---@class cu.FftShiftOptions
---@field axes? integer|integer[] the axes to shift (default: all)
---@field stream? cu.Stream the stream to queue on

--- Options of cu.fft.fftfreq and cu.fft.rfftfreq.
---@class cu.FftFreqOptions
---@field d? number the sample spacing (default 1)
---@field dtype? "f32"|"f64" the result's dtype (default "f64")
---@field stream? cu.Stream the stream to copy on

--- The 1-D discrete Fourier transform along one axis: X[k] = sum_j x[j] exp(-2 pi i jk/n).
---@param a cu.Array
---@param opts? cu.FftOptions
---@return cu.Array
function cu.fft.fft(a, opts) end

--- The inverse of fft (divided by n with the default norm).
---@param a cu.Array
---@param opts? cu.FftOptions
---@return cu.Array
function cu.fft.ifft(a, opts) end

--- The fft of real input: the n/2+1 non-negative frequencies. Complex input is an error.
---@param a cu.Array
---@param opts? cu.FftOptions
---@return cu.Array
function cu.fft.rfft(a, opts) end

--- The inverse of rfft: n real values (default n = 2*(m-1)) from m Hermitian frequencies; the
--- imaginary parts of the zero and (even n) the last frequency are ignored.
---@param a cu.Array
---@param opts? cu.FftOptions
---@return cu.Array
function cu.fft.irfft(a, opts) end

--- The fft of a Hermitian-symmetric signal given by its first half: real, n = 2*(m-1) by default
--- (irfft of the conjugate, with the norm's directions swapped).
---@param a cu.Array
---@param opts? cu.FftOptions
---@return cu.Array
function cu.fft.hfft(a, opts) end

--- The inverse of hfft, from real input: n/2+1 values (the conjugate of rfft, norms swapped).
---@param a cu.Array
---@param opts? cu.FftOptions
---@return cu.Array
function cu.fft.ihfft(a, opts) end

--- The n-D fft over `axes` (default all), one axis after another.
---@param a cu.Array
---@param opts? cu.FftnOptions
---@return cu.Array
function cu.fft.fftn(a, opts) end

--- The inverse of fftn.
---@param a cu.Array
---@param opts? cu.FftnOptions
---@return cu.Array
function cu.fft.ifftn(a, opts) end

--- The n-D fft of real input: rfft over the last of `axes`, then fft over the others.
---@param a cu.Array
---@param opts? cu.FftnOptions
---@return cu.Array
function cu.fft.rfftn(a, opts) end

--- The inverse of rfftn: ifft over all but the last of `axes`, then irfft over the last.
---@param a cu.Array
---@param opts? cu.FftnOptions
---@return cu.Array
function cu.fft.irfftn(a, opts) end

--- fftn over the last two axes (numpy's fft2).
---@param a cu.Array
---@param opts? cu.FftnOptions
---@return cu.Array
function cu.fft.fft2(a, opts) end

--- ifftn over the last two axes.
---@param a cu.Array
---@param opts? cu.FftnOptions
---@return cu.Array
function cu.fft.ifft2(a, opts) end

--- rfftn over the last two axes.
---@param a cu.Array
---@param opts? cu.FftnOptions
---@return cu.Array
function cu.fft.rfft2(a, opts) end

--- irfftn over the last two axes.
---@param a cu.Array
---@param opts? cu.FftnOptions
---@return cu.Array
function cu.fft.irfft2(a, opts) end

--- Moves the zero frequency to the centre: a roll by floor(n/2) along each of `axes` (default
--- all). A new array; any location and dtype.
---@param a cu.Array
---@param opts? cu.FftShiftOptions
---@return cu.Array
function cu.fft.fftshift(a, opts) end

--- The inverse of fftshift: a roll by -floor(n/2) along each axis.
---@param a cu.Array
---@param opts? cu.FftShiftOptions
---@return cu.Array
function cu.fft.ifftshift(a, opts) end

--- The sample frequencies of an n-point fft, as numpy: 0, 1, ..., (n-1)/2, -(n/2), ..., -1, each
--- divided by n*d. A device array (f64 by default).
---@param n integer
---@param d? number|cu.FftFreqOptions the sample spacing (default 1), or the options
---@return cu.Array
function cu.fft.fftfreq(n, d) end

--- The n/2+1 sample frequencies of rfft: 0, 1, ..., n/2, each divided by n*d.
---@param n integer
---@param d? number|cu.FftFreqOptions the sample spacing (default 1), or the options
---@return cu.Array
function cu.fft.rfftfreq(n, d) end

--- Options of cu.can_cast.
---@class cu.CanCastOptions
---@field casting? "no"|"equiv"|"safe"|"same_kind"|"unsafe" numpy's casting rule (default "safe": every value of `from` is kept)

--- Whether a `from` (a dtype or an array's) casts to `to` under numpy's casting rule: by default
--- "safe", true when the promotion of the two is `to`.
---@param from cu.DType|cu.Array
---@param to cu.DType
---@param opts? cu.CanCastOptions
---@return boolean
function cu.can_cast(from, to, opts) end

--- The dtype the operations give for these operands: arrays and dtype names promote as arrays;
--- numbers, booleans and cu.complex values are weak scalars (they keep the others' type within
--- their kind). At least one array or dtype.
---@param ... cu.Array|cu.DType|number|boolean|cu.Complex
---@return cu.DType
function cu.result_type(...) end

--- The limits of a floating dtype (a complex dtype gives its real part's).
---@class cu.FInfo
---@field bits integer the size in bits
---@field eps number the gap between 1 and the next value
---@field max number the largest finite value
---@field min number the smallest finite value (-max)
---@field smallest_normal number the smallest positive normal value
---@field dtype cu.DType the real dtype described

--- The limits of an integer dtype.
---@class cu.IInfo
---@field bits integer the size in bits
---@field max integer the largest value
---@field min integer the smallest value
---@field dtype cu.DType the dtype described

--- The machine limits of a floating or complex dtype.
---@param t cu.DType|cu.Array
---@return cu.FInfo
function cu.finfo(t) end

--- The limits of an integer dtype.
---@param t cu.DType|cu.Array
---@return cu.IInfo
function cu.iinfo(t) end

--- Whether dtype `t` is of `kind`: "bool", "signed integer", "unsigned integer", "integral",
--- "real floating", "complex floating", "numeric", a dtype name, or a table of these (any).
---@param t cu.DType|cu.Array
---@param kind string|string[]
---@return boolean
function cu.isdtype(t, kind) end

-- ## Experiment scripts

--- The command line and the RESULT lines of experiment scripts (docs/guide/experiments.md):
--- `local script = require "cu.script" ---@type cu.script`, then
--- `local opt, flags = script.args(arg, "key=value or --quick")`.
---@class cu.script
local script = {}

--- Splits the script's arguments into options (`key=value`: opt.key is the text "value") and flags
--- (`--word`: flags.word is true). Any other argument raises "unknown argument 'x' (expected
--- <expected>)".
---@param argv string[]? the global arg (nil counts as no arguments)
---@param expected string what the script takes, for the message: "key=value, --quick or --results"
---@return table<string,string> opt
---@return table<string,boolean> flags
function script.args(argv, expected) end

--- opt[key] as an integer ("1e3" is 1000); `default` when it is absent or not an integer.
---@param opt table<string,string>
---@param key string
---@param default? integer
---@return integer?
function script.int(opt, key, default) end

--- opt[key] as a number; `default` when it is absent or not a number.
---@param opt table<string,string>
---@param key string
---@param default? number
---@return number?
function script.number(opt, key, default) end

--- The line "RESULT key=value" (value as tostring writes it: format numbers first for a fixed
--- precision).
---@param key string
---@param value any
---@return string
function script.line(key, value) end

--- A new, empty list of RESULT lines.
---@return cu.ScriptResults
function script.results() end

--- RESULT lines kept for the end of a script (script.results()), which tests read back.
---@class cu.ScriptResults
---@field lines string[] the lines so far, in order
local ScriptResults = {}

--- Keeps the line "RESULT key=value" (as script.line).
---@param key string
---@param value any
function ScriptResults:add(key, value) end

--- Prints the lines kept so far, joined by newlines, in one print.
function ScriptResults:print() end

-- ## Test helpers

--- A small runner for Lua test scripts: `local T = require "cu.testing" ---@type cu.testing`, then
--- T.case(name, fn) for each case and `os.exit(T.run())`.
---@class cu.testing
local testing = {}

--- Adds a test case.
---@param name string
---@param fn fun()
function testing.case(name, fn) end

--- A short readable form of a value (tables nested, strings quoted), for messages.
---@param v any
---@return string
function testing.describe(v) end

--- Raises unless actual equals expected (tables compared element by element, nested).
---@param actual any
---@param expected any
---@param what? string prefix of the message
function testing.eq(actual, expected, what) end

--- Raises unless |actual - expected| <= tol (default 1e-12), element by element for nested tables;
--- NaN never passes.
---@param actual number|table
---@param expected number|table
---@param tol? number
---@param what? string
function testing.near(actual, expected, tol, what) end

--- Raises unless v is true-ish; returns v.
---@generic V
---@param v V
---@param what? string the message
---@return V
function testing.truthy(v, what) end

--- Calls fn, which must raise an error containing `needle` (plain text); returns the message.
---@param fn function
---@param needle? string
---@param what? string
---@return string
function testing.raises(fn, needle, what) end

--- Ends the current case as skipped.
---@param reason string
function testing.skip(reason) end

--- Test hook for the tests of isolated sweep points (cu.sweep{isolate = true}): ends this process
--- with SIGSEGV, as a crashing kernel launch or library does. Runs only when the environment
--- variable CULUA_TEST_HOOKS is 1; otherwise it raises.
function testing.segfault() end

--- Runs every case (or those whose name contains the script's first argument), prints one line per
--- case and a summary; returns 0 when all passed, else 1 (for os.exit).
---@return integer
function testing.run() end

return cu
