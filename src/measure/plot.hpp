// Plots of result rows through gnuplot, run as a child process.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measure/results.hpp"

namespace culua::detail::measure {

struct PlotSpec {
  std::string x;                    // field of the horizontal axis (a dotted path)
  std::string y;                    // field of the vertical axis ("gpu.median")
  std::vector<std::string> series;  // fields whose values split rows into lines
  std::string file;                 // .png or .svg
  std::optional<bool> logx, logy;   // default: log x when x is positive and spans 100x or more
  std::string title, xlabel, ylabel;
  std::string kind;  // "" or "lines": y against x; "roofline": measure/counters.hpp
};

// The gnuplot terminal for a file name: "png" or "svg"; raises culua::detail::Error for other
// extensions. `who` prefixes messages ("cu.plot").
std::string plot_format(const std::string& file, const std::string& who);
// A gnuplot string in single quotes (no escapes are processed there; '' is a quote; line breaks
// become spaces).
std::string gnuplot_quoted(std::string_view s);
// gnuplot's lines that select the terminal for `format` ("png", "svg") and the output `file`.
std::string terminal_lines(const std::string& format, const std::string& file);
// The path of gnuplot on PATH, or empty.
std::string find_gnuplot();
// The message for a missing gnuplot.
std::string gnuplot_missing_message(const std::string& who);

// Plots `rows` (objects; a row without a number at y, or without x, is left out; NaN or an
// infinity at x or y is an error naming the row) into spec.file. Raises culua::detail::Error when
// x=, y= or file= is missing (checked in that order), a value cannot be placed, gnuplot is missing
// or fails (with its messages).
void plot(const std::vector<Value>& rows, const PlotSpec& spec, const std::string& who);

// The gnuplot script and data for `rows` (exposed for tests): the data file is read from
// `data_path`.
struct PlotScript {
  std::string script;
  std::string data;
  size_t series = 0;
  size_t points = 0;
};
PlotScript plot_script(const std::vector<Value>& rows, const PlotSpec& spec,
                       const std::string& data_path, const std::string& who);

// A figure drawn for showing inline (a Jupyter kernel): `plot_to(file)` is called for a .png and
// an .svg file in a temporary folder (the sandbox's file policy does not apply to them); returns
// {"image/png", the PNG's bytes} and {"image/svg+xml", the SVG's text}. The folder is removed.
std::vector<std::pair<std::string, std::string>> render_inline(
    const std::function<void(const std::string& file)>& plot_to);

// Runs gnuplot on what `make(data_path)` returns (its script reads its data from data_path) to
// write `file`; the checks and messages of plot().
void run_gnuplot_plot(const std::string& file,
                      const std::function<PlotScript(const std::string& data_path)>& make,
                      const std::string& who);

}  // namespace culua::detail::measure
