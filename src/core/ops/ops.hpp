// Array operations of the core. `stream` is an explicit stream, or null for the current stream of
// the array's device. Work on device arrays is queued (asynchronous); work on host arrays runs on
// the calling thread once queued work touching them is done.
#pragma once

#include <vector>

#include "core/model/array.hpp"
#include "core/model/scalar.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

// The stream that work on `a` goes to: `stream` when given (it must belong to the array's
// device), else the current stream of the array's device (of the current device for host arrays).
Stream& stream_for(Runtime& rt, const Array& a, Stream* stream);

Array empty(Runtime& rt, const Shape& shape, DType dtype, Location loc = Location::Device,
            Stream* stream = nullptr);
Array full(Runtime& rt, const Shape& shape, DType dtype, const Scalar& value,
           Location loc = Location::Device, Stream* stream = nullptr);
// numpy's arange: values start, start+step, ... below stop (above it for negative steps).
Array arange(Runtime& rt, const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype,
             Location loc = Location::Device, Stream* stream = nullptr);
// n values from a to b, both included.
Array linspace(Runtime& rt, double a, double b, int64_t n, DType dtype,
               Location loc = Location::Device, Stream* stream = nullptr);

void fill(Runtime& rt, const Array& a, const Scalar& value, Stream* stream = nullptr);

// Copies between arrays of equal shape, in any direction, converting dtypes. Device to device is
// asynchronous. Host to device and device to host are asynchronous only when the host side is
// pinned and `stream` is given; otherwise they return when the copy is complete (CUDA's
// synchronous semantics). Host to host runs on the calling thread.
void copy(Runtime& rt, const Array& dst, const Array& src, Stream* stream = nullptr);

Array contiguous(Runtime& rt, const Array& a,
                 Stream* stream = nullptr);  // `a` itself if contiguous
Array clone(Runtime& rt, const Array& a, Stream* stream = nullptr);
Array astype(Runtime& rt, const Array& a, DType dtype, Stream* stream = nullptr);
Array reshape(Runtime& rt, const Array& a, const Shape& shape, Stream* stream = nullptr);
Array view_as(const Array& a, const Shape& shape);  // no copy; needs a contiguous array
// A copy in another location (to_host / to_device).
Array to_location(Runtime& rt, const Array& a, Location loc, Stream* stream = nullptr);

// Reads one element of a 0-d view; synchronizes with the work that touches the array.
Scalar read_element(Runtime& rt, const Array& element);
// Writes one element of a 0-d view (asynchronous on device arrays).
void write_element(Runtime& rt, const Array& element, const Scalar& value);
// The whole array as contiguous host bytes of its dtype; synchronizes.
std::vector<unsigned char> read_contiguous(Runtime& rt, const Array& a);

// Before the host reads or writes a host array: waits for pending asynchronous copies into or
// out of it (an implicit synchronization, counted by the monitor and refused under cu.strict).
void wait_host_access(Runtime& rt, Buffer& host_buffer, const char* what);

// Keeps `s` busy for `seconds` (a spinning kernel on CUDA).
void sleep(Runtime& rt, double seconds, Stream* stream = nullptr);

}  // namespace culua::detail
