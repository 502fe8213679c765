// The interactive loop: line editing, history and completion through libedit's readline
// compatibility API, multi-line chunks, expression lines that print their values, and Ctrl-C at
// the prompt discarding the line being typed.
#include <editline/readline.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/interpreter.hpp"
#include "core/version.hpp"

namespace culua::detail::cli {

namespace {

std::string history_path() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.culua_history" : std::string();
}

// ---- reading lines ----

// Ctrl-C at the prompt. The signal may be handled on any thread (the CUDA runtime's threads
// take signals too), so the handler writes to a pipe that the key reader polls beside the
// terminal; the reader then ends the line as end of input would, and read_line tells the two
// apart by the flag.
volatile sig_atomic_t prompt_interrupted = 0;
int interrupt_pipe[2] = {-1, -1};

void on_prompt_sigint(int) {
  const int saved = errno;
  prompt_interrupted = 1;
  if (interrupt_pipe[1] >= 0) {
    const char byte = 0;
    [[maybe_unused]] const ssize_t n = write(interrupt_pipe[1], &byte, 1);
  }
  errno = saved;
}

void drain_interrupt_pipe() {
  char buf[64];
  while (interrupt_pipe[0] >= 0 && read(interrupt_pipe[0], buf, sizeof buf) > 0) {
  }
}

// The next byte of input, or EOF (end of input, an error, or Ctrl-C).
int read_byte(int fd) {
  for (;;) {
    if (prompt_interrupted) return EOF;
    pollfd p[2] = {{interrupt_pipe[0], POLLIN, 0}, {fd, POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR) return EOF;  // a closed pipe (-1) is skipped
    if (p[0].revents & POLLIN) {
      drain_interrupt_pipe();
      prompt_interrupted = 1;
      return EOF;
    }
    if (!(p[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) continue;
    unsigned char c = 0;
    const ssize_t n = read(fd, &c, 1);
    if (n == 1) return c;
    if (n < 0 && errno == EINTR) continue;
    return EOF;
  }
}

bool utf8_input = false;  // the locale is multibyte: keys are read as UTF-8 characters

// libedit's key reader: one character (a code point when the input is UTF-8).
int read_key(FILE* in) {
  const int fd = fileno(in);
  const int c = read_byte(fd);
  if (!utf8_input || c == EOF || c < 0xC0 || c > 0xF4) return c;
  const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
  int code = c & (0x3F >> extra);
  for (int i = 0; i < extra; ++i) {
    const int next = read_byte(fd);
    if (next == EOF) return EOF;
    if ((next & 0xC0) != 0x80) return 0xFFFD;
    code = (code << 6) | (next & 0x3F);
  }
  return code;
}

enum class Input { Line, End, Interrupted };

// Standard input is a terminal: lines are edited with libedit. Otherwise (a file, a pipe) they
// are read as lua reads them there through readline: the prompt is printed and the line echoed.
bool terminal_input = false;

Input read_plain_line(const char* prompt, std::string& out) {
  std::fputs(prompt, stdout);
  std::fflush(stdout);
  out.clear();
  int c = EOF;
  while ((c = std::getc(stdin)) != EOF && c != '\n') out.push_back(static_cast<char>(c));
  if (c == EOF && out.empty()) {
    std::clearerr(stdin);
    return Input::End;
  }
  std::fputs(out.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  return Input::Line;
}

Input read_line(const char* prompt, std::string& out) {
  if (!terminal_input) return read_plain_line(prompt, out);
  drain_interrupt_pipe();
  prompt_interrupted = 0;
  char* line = readline(prompt);
  if (prompt_interrupted) {
    std::free(line);
    std::fputs("^C\n", stdout);
    std::fflush(stdout);
    return Input::Interrupted;
  }
  if (!line) return Input::End;
  out = line;
  std::free(line);
  return Input::Line;
}

// The prompt as lua.c's get_prompt: the global _PROMPT (_PROMPT2 on continuation lines) through
// tostring, or "> " (">> ") when it is nil.
int push_prompt(lua_State* L) {
  const bool first_line = lua_toboolean(L, 1);
  if (lua_getglobal(L, first_line ? "_PROMPT" : "_PROMPT2") == LUA_TNIL) {
    lua_pushstring(L, first_line ? "> " : ">> ");
  } else {
    luaL_tolstring(L, -1, nullptr);
  }
  return 1;
}

std::string prompt_text(lua_State* L, bool first_line) {
  lua_pushcfunction(L, push_prompt);
  lua_pushboolean(L, first_line);
  std::string prompt = first_line ? "> " : ">> ";
  if (docall(L, 1, 1) == LUA_OK) {
    size_t len = 0;
    const char* text = lua_tolstring(L, -1, &len);
    prompt.assign(text, len);
    lua_pop(L, 1);
  } else {
    report(L, LUA_ERRRUN);  // a failing __tostring of _PROMPT: the default prompt serves
  }
  return prompt;
}

// ---- completion ----

// Completion reads the Lua state without side effects: raw fields only, and a metatable's
// __index only when it is a table or (as culua's bindings do) a C function keeping its method
// table as an upvalue; no function is ever called, so completing `cu.` does not create the
// backend (`cu.backend` is computed by the module's __index).
lua_State* completion_state = nullptr;

struct Candidate {
  std::string name;
  bool table = false;  // a unique table completes with a "." after it
};
std::vector<Candidate> candidates;
size_t next_candidate = 0;

constexpr std::string_view kKeywords[] = {"and",   "break", "do",       "else", "elseif", "end",
                                          "false", "for",   "function", "goto", "if",     "in",
                                          "local", "nil",   "not",      "or",   "repeat", "return",
                                          "then",  "true",  "until",    "while"};

bool is_keyword(std::string_view s) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), s) != std::end(kKeywords);
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return !is_keyword(s);
}

// Pushes the table whose fields the value at `idx` lends through its metatable's __index, or
// returns false pushing nothing.
bool push_index_table(lua_State* L, int idx) {
  if (!lua_getmetatable(L, idx)) return false;
  lua_pushliteral(L, "__index");
  const int type = lua_rawget(L, -2);
  lua_remove(L, -2);
  if (type == LUA_TTABLE) return true;
  if (lua_iscfunction(L, -1)) {
    for (int i = 1; lua_getupvalue(L, -1, i); ++i) {
      if (lua_type(L, -1) == LUA_TTABLE) {
        lua_remove(L, -2);
        return true;
      }
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  return false;
}

constexpr int kMaxIndexDepth = 8;  // __index chains followed at most this deep (cycles end)

// Pushes field `key` of the value at `idx` (raw, then through __index tables), or returns false
// pushing nothing.
bool push_field(lua_State* L, int idx, const std::string& key) {
  idx = lua_absindex(L, idx);
  lua_pushvalue(L, idx);
  for (int depth = 0; depth < kMaxIndexDepth; ++depth) {
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_pushlstring(L, key.data(), key.size());
      if (lua_rawget(L, -2) != LUA_TNIL) {
        lua_remove(L, -2);
        return true;
      }
      lua_pop(L, 1);
    }
    if (!push_index_table(L, -1)) break;
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  return false;
}

// Adds the identifier keys of the value at `idx` starting with `prefix` (for a method call only
// those holding functions).
void collect_fields(lua_State* L, int idx, std::string_view prefix, bool methods,
                    std::set<std::string>& seen) {
  idx = lua_absindex(L, idx);
  lua_pushvalue(L, idx);
  for (int depth = 0; depth < kMaxIndexDepth; ++depth) {
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        size_t len = 0;
        const char* k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &len) : nullptr;
        const std::string_view key = k ? std::string_view(k, len) : std::string_view();
        const int type = lua_type(L, -1);
        if (k && key.substr(0, prefix.size()) == prefix && is_identifier(key) &&
            (!methods || type == LUA_TFUNCTION) && seen.emplace(key).second) {
          candidates.push_back(Candidate{std::string(key), type == LUA_TTABLE});
        }
        lua_pop(L, 1);
      }
    }
    if (!push_index_table(L, -1)) break;
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
}

struct CompletionRequest {
  std::vector<std::string> path;  // the object's dotted path; empty: a global name
  bool method = false;            // after ':'
  std::string prefix;             // what was typed of the name
};

int gather_candidates(lua_State* L) {
  const auto& req = *static_cast<const CompletionRequest*>(lua_touserdata(L, 1));
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  for (const std::string& name : req.path) {
    if (!push_field(L, -1, name)) return 0;
  }
  std::set<std::string> seen;
  collect_fields(L, -1, req.prefix, req.method, seen);
  if (req.path.empty()) {
    for (std::string_view k : kKeywords) {
      if (k.substr(0, req.prefix.size()) == req.prefix) {
        candidates.push_back(Candidate{std::string(k), false});
      }
    }
  }
  return 0;
}

// True when position `end` of the line is inside a string literal or a comment.
bool in_string_or_comment(std::string_view line, size_t end) {
  char quote = 0;
  for (size_t i = 0; i < end && i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '-' && i + 1 < end && line[i + 1] == '-') {
      return true;
    }
  }
  return quote != 0;
}

// Splits what precedes the word being completed: "cu.host." gives the path {cu, host}; false
// when it is no completable expression (a call's result, a number).
bool parse_path(std::string_view line, size_t start, CompletionRequest& req) {
  if (start == 0 || (line[start - 1] != '.' && line[start - 1] != ':')) return true;
  req.method = line[start - 1] == ':';
  size_t end = start - 1;
  if (!req.method && end > 0 && line[end - 1] == '.') return true;  // the `..` operator
  size_t begin = end;
  while (begin > 0) {
    const auto c = static_cast<unsigned char>(line[begin - 1]);
    if (!std::isalnum(c) && c != '_' && c != '.') break;
    --begin;
  }
  std::string_view path = line.substr(begin, end - begin);
  if (path.empty()) return false;
  for (;;) {
    const size_t dot = path.find('.');
    const std::string_view name = path.substr(0, dot);
    if (!is_identifier(name)) return false;
    req.path.emplace_back(name);
    if (dot == std::string_view::npos) return true;
    path.remove_prefix(dot + 1);
  }
}

char* candidate_generator(const char*, int state) {
  if (state == 0) next_candidate = 0;
  if (next_candidate >= candidates.size()) return nullptr;
  return strdup(candidates[next_candidate++].name.c_str());
}

char** complete(const char* text, int start, int) {
  rl_attempted_completion_over = 1;  // never fall back to file names
  rl_completion_append_character = '\0';
  candidates.clear();
  lua_State* L = completion_state;
  const std::string_view line = rl_line_buffer ? rl_line_buffer : "";
  const auto at = static_cast<size_t>(start);
  if (!L || in_string_or_comment(line, at)) return nullptr;
  CompletionRequest req;
  req.prefix = text;
  try {
    if (!parse_path(line, at, req)) return nullptr;
    lua_pushcfunction(L, gather_candidates);
    lua_pushlightuserdata(L, &req);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
      lua_pop(L, 1);
      candidates.clear();
    }
  } catch (const std::exception&) {
    candidates.clear();
  }
  if (candidates.empty()) return nullptr;
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.name < b.name; });
  if (candidates.size() == 1 && candidates[0].table) rl_completion_append_character = '.';
  return rl_completion_matches(text, candidate_generator);
}

void setup_line_editing() {
  // libedit turns keys into multibyte text through the locale's character type.
  std::setlocale(LC_CTYPE, "");
  utf8_input = MB_CUR_MAX > 1;
  rl_readline_name = "culua";
  rl_catch_signals = 0;  // Ctrl-C at the prompt is ours (read_line)
  rl_getc_function = read_key;
  rl_attempted_completion_function = complete;
  // Words end at operators, brackets and at '.' and ':', so that `cu.ze` completes the field
  // `ze` of `cu` and a listing shows field names.
  static char word_breaks[] = " \t\n\"\\'`@$><=;|&{}()[],+-*/%^#~.:";
  rl_basic_word_break_characters = word_breaks;
  rl_completer_word_break_characters = word_breaks;
}

// ---- chunks ----

// A chunk that failed only because its end is missing (lua.c's incomplete()).
bool incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len = 0;
  const char* msg = lua_tolstring(L, -1, &len);
  constexpr std::string_view kEof = "<eof>";
  return msg && len >= kEof.size() && std::string_view(msg + len - kEof.size()) == kEof;
}

enum class Chunk { Loaded, Failed, Discarded, End };

// Reads and compiles the next chunk: a line is first tried as "return <line>" (so expressions
// print), then as statements, reading more lines while the chunk is incomplete. Leaves the
// function (Loaded) or the error message (Failed) on the stack; `text` is what was typed.
Chunk load_chunk(lua_State* L, std::string& text) {
  std::string line;
  switch (read_line(prompt_text(L, true).c_str(), line)) {
    case Input::End:
      return Chunk::End;
    case Input::Interrupted:
      return Chunk::Discarded;
    case Input::Line:
      break;
  }
  if (!line.empty() && line[0] == '=') line = "return " + line.substr(1);  // Lua 5.1's "=expr"
  text = line;
  const std::string ret = "return " + line + ";";
  if (luaL_loadbuffer(L, ret.data(), ret.size(), "=stdin") == LUA_OK) return Chunk::Loaded;
  lua_pop(L, 1);
  for (;;) {
    const int status = luaL_loadbuffer(L, text.data(), text.size(), "=stdin");
    if (status == LUA_OK) return Chunk::Loaded;
    if (!incomplete(L, status)) return Chunk::Failed;
    switch (read_line(prompt_text(L, false).c_str(), line)) {
      case Input::End:
        if (terminal_input) std::fputs("\n", stdout);
        return Chunk::Failed;  // reports the "<eof>" error; the session goes on
      case Input::Interrupted:
        lua_pop(L, 1);
        return Chunk::Discarded;
      case Input::Line:
        break;
    }
    lua_pop(L, 1);
    text += "\n" + line;
  }
}

// Reports a failed docall; an interrupted one starts on a new line (after the terminal's "^C").
void report_failure(lua_State* L, int status) {
  if (interrupted()) std::fputs("\n", stdout);
  std::fflush(stdout);
  report(L, status);
}

void print_results(lua_State* L) {
  const int n = lua_gettop(L);
  if (n == 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_getglobal(L, "print");
  lua_insert(L, 1);
  // Printing an array reads the device: a run of its own, interruptible as any other. A failure
  // other than Ctrl-C is reported as lua.c does.
  const int status = docall(L, n, 0, false);
  if (status != LUA_OK && !interrupted()) {
    lua_pushfstring(L, "error calling 'print' (%s)", luaL_tolstring(L, -1, nullptr));
    lua_replace(L, -3);
    lua_pop(L, 1);
  }
  if (status != LUA_OK) report_failure(L, status);
}

// ": backend NAME, device 0: NAME". Reading cu.backend creates the backend (and the CUDA
// context): worth it in a REPL.
int describe_backend(lua_State* L) {
  lua_getglobal(L, "cu");
  lua_getfield(L, 1, "backend");
  const char* backend = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?";
  lua_getfield(L, 1, "devices");
  lua_call(L, 0, 1);
  const char* device = nullptr;
  if (lua_type(L, 3) == LUA_TTABLE && lua_rawgeti(L, 3, 1) == LUA_TTABLE &&
      lua_getfield(L, -1, "name") == LUA_TSTRING) {
    device = lua_tostring(L, -1);
  }
  if (device) {
    lua_pushfstring(L, ": backend %s, device 0: %s", backend, device);
  } else {
    lua_pushfstring(L, ": backend %s", backend);
  }
  return 1;
}

void banner(lua_State* L) {
  const int top = lua_gettop(L);
  lua_pushcfunction(L, describe_backend);
  const bool ok = lua_pcall(L, 0, 1, 0) == LUA_OK;
  const char* what = ok ? lua_tostring(L, -1) : luaL_tolstring(L, -1, nullptr);
  std::printf("culua %s (%s)%s%s\n", CULUA_VERSION, LUA_RELEASE,
              ok ? "" : ": no backend: ", what ? what : "");
  lua_settop(L, top);
  if (terminal_input) {
    std::printf(
        "Type Lua; an expression prints its value. Tab completes, Ctrl-C interrupts, Ctrl-D "
        "exits.\n");
  }
  std::fflush(stdout);
}

}  // namespace

int load_cell(lua_State* L, const std::string& text, bool* is_incomplete) {
  *is_incomplete = false;
  std::string code = text;
  if (!code.empty() && code[0] == '=') code = "return " + code.substr(1);  // Lua 5.1's "=expr"
  const std::string ret = "return " + code + ";";
  if (luaL_loadbuffer(L, ret.data(), ret.size(), "=cell") == LUA_OK) return LUA_OK;
  lua_pop(L, 1);
  const int status = luaL_loadbuffer(L, code.data(), code.size(), "=cell");
  if (status != LUA_OK) *is_incomplete = incomplete(L, status);
  return status;
}

std::vector<std::string> completions(lua_State* L, const std::string& text, size_t cursor,
                                     size_t* start) {
  cursor = std::min(cursor, text.size());
  size_t begin = cursor;
  while (begin > 0) {
    const auto c = static_cast<unsigned char>(text[begin - 1]);
    if (!std::isalnum(c) && c != '_') break;
    --begin;
  }
  *start = begin;
  const size_t line_start = text.rfind('\n', begin == 0 ? 0 : begin - 1);
  const size_t from = line_start == std::string::npos ? 0 : line_start + 1;
  const std::string_view line = std::string_view(text).substr(from, cursor - from);
  const size_t at = begin - from;
  candidates.clear();
  std::vector<std::string> out;
  if (in_string_or_comment(line, at)) return out;
  CompletionRequest req;
  req.prefix = std::string(line.substr(at));
  if (!parse_path(line, at, req)) return out;
  lua_pushcfunction(L, gather_candidates);
  lua_pushlightuserdata(L, &req);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1);
  for (const Candidate& c : candidates) out.push_back(c.name);
  candidates.clear();
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string backend_description(lua_State* L) {
  const int top = lua_gettop(L);
  lua_pushcfunction(L, describe_backend);
  const bool ok = lua_pcall(L, 0, 1, 0) == LUA_OK;
  const char* what = ok ? lua_tostring(L, -1) : luaL_tolstring(L, -1, nullptr);
  std::string s = std::string(ok ? "" : ": no backend: ") + (what ? what : "");
  lua_settop(L, top);
  return s;
}

void run_repl(lua_State* L) {
  terminal_input = isatty(STDIN_FILENO);
  // History and line editing are for a person at a terminal; piped input leaves no history.
  const std::string history = terminal_input ? history_path() : std::string();
  if (terminal_input) {
    setup_line_editing();
    using_history();
    stifle_history(1000);
    if (!history.empty()) read_history(history.c_str());
  }
  banner(L);
  lua_settop(L, 0);
  completion_state = L;
  // Between runs a Ctrl-C at a terminal only discards the line being typed (runs install their
  // own handler); with piped input it ends the program, as in lua.
  struct sigaction previous = {};
  if (terminal_input) {
    if (pipe2(interrupt_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
      interrupt_pipe[0] = interrupt_pipe[1] = -1;
    struct sigaction action = {};
    action.sa_handler = on_prompt_sigint;
    action.sa_flags = SA_RESTART;  // as signal(): other system calls go on
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous);
  }
  for (;;) {
    std::string text;
    const Chunk chunk = load_chunk(L, text);
    if (chunk == Chunk::End) break;
    if (chunk == Chunk::Discarded) continue;
    if (terminal_input && !text.empty()) {
      add_history(text.c_str());
      if (!history.empty()) write_history(history.c_str());
    }
    if (chunk == Chunk::Failed) {
      report(L, LUA_ERRSYNTAX);
    } else if (const int status = docall(L, 0, LUA_MULTRET); status != LUA_OK) {
      report_failure(L, status);
    } else {
      print_results(L);
    }
    lua_settop(L, 0);
  }
  if (terminal_input) sigaction(SIGINT, &previous, nullptr);
  for (int& fd : interrupt_pipe) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  completion_state = nullptr;
  if (!history.empty()) write_history(history.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace culua::detail::cli
