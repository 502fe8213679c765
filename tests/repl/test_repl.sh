#!/usr/bin/env bash
# The REPL driven through a pseudo-terminal (tmux) as a person would use it: completion,
# multi-line chunks, expression results, errors, Ctrl-C (running Lua code, long waits for the
# device, at the prompt), the history file and Ctrl-D.
#   tests/repl/test_repl.sh CULUA [host|cuda]
# Exit status: 0 passed, 1 failed, 77 skipped (no tmux, or the backend is unavailable: culua
# exits 69 then). Prints the measured Ctrl-C latencies (from sending the key to the error shown).
set -uo pipefail

if (($# < 1)); then
  echo "usage: $0 CULUA [host|cuda]" >&2
  exit 2
fi
culua=$(realpath "$1")
# Errors start with the program's name as invoked (argv[0], as in lua): this path. As a regex:
prog_re=$(sed 's/[][().*^$+?{}|\\]/\\&/g' <<<"$culua")
backend=${2:-host}
readonly SKIP=77
export LC_ALL=C.UTF-8 # a UTF-8 terminal, for tmux and culua alike

if ! command -v tmux >/dev/null 2>&1; then
  echo "SKIPPED: no tmux"
  exit $SKIP
fi
"$culua" --backend "$backend" -e 'local _ = cu.backend' >/dev/null 2>&1
rc=$?
if ((rc == 69)); then
  echo "SKIPPED: the $backend backend is unavailable here"
  exit $SKIP
fi

work=$(mktemp -d)
mkdir -p "$work/home"
sock="culua-repl-test-$$"
tm() { tmux -L "$sock" -f /dev/null "$@"; }
cleanup() {
  tm kill-server >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
# A session that lives as long as the test: ending a REPL's session never stops the server (a
# new session would race with its exit).
tm new-session -d -s keeper -x 80 -y 10 "sleep 100000"

failures=0
now_ms() { date +%s%3N; }
screen() { tm capture-pane -p -J -t repl -S - 2>/dev/null; }
ok() { echo "ok: $*"; }
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
  echo "----- screen (last 40 lines) -----"
  screen | sed '/^[[:space:]]*$/d' | tail -40
  echo "----------------------------------"
}

# poll COMMAND... [within TIMEOUT_S via $timeout]: runs COMMAND every 10 ms until it succeeds.
poll() {
  local deadline=$(($(now_ms) + ${timeout:-10} * 1000))
  while (($(now_ms) < deadline)); do
    "$@" && return 0
    sleep 0.01
  done
  return 1
}

last_line() { screen | sed '/^[[:space:]]*$/d' | tail -1; }
at_prompt() { [[ $(last_line) =~ ^\>[[:space:]]*$ ]]; }
at_continuation() { [[ $(last_line) =~ ^\>\>[[:space:]]*$ ]]; }
screen_has() { screen | grep -qE -- "$1"; }
# The lines printed after the last "> LINE" (PROMPT LINE) up to the next prompt.
output_after() {
  screen | awk -v line="${2:->} $1" '
    $0 == line { n = 0; delete out; collecting = 1; next }
    collecting && /^>>?[[:space:]]*$/ { collecting = 0; next }
    collecting && !/^[[:space:]]*$/ { out[n++] = $0 }
    END { for (i = 0; i < n; i++) print out[i] }'
}
# True when "> LINE" is on the screen and a prompt follows its last occurrence.
done_after() {
  screen | awk -v line="> $1" '
    $0 == line { seen = 1; prompt = 0; next }
    seen && /^>[[:space:]]*$/ { prompt = 1 }
    END { exit !(seen && prompt) }'
}

type_text() { tm send-keys -t repl -l -- "$1"; }
key() { tm send-keys -t repl "$@"; }
# Types LINE and Enter, and waits for the prompt that follows its output.
run_line() {
  type_text "$1"
  key Enter
  timeout=${2:-20} poll done_after "$1" || fail "no prompt after '$1'"
}
# expect LINE REGEX: runs LINE; its output must match REGEX (grep -E over the whole output as
# one text: ^ and $ are its start and end, . also matches a newline).
expect() {
  run_line "$1"
  local out
  out=$(output_after "$1")
  if printf '%s' "$out" | grep -qzE -- "$2"; then
    ok "'$1' printed $(head -c 60 <<<"$out" | tr '\n' ' ')"
  else
    fail "'$1' printed [$out], expected /$2/"
  fi
}
discard_line() {
  key C-c
  poll at_prompt || fail "no fresh prompt after Ctrl-C at the prompt"
}

start_repl() {
  tm new-session -d -s repl -x 200 -y 50 -c "$work" \
    "exec env HOME='$work/home' '$culua' --backend $backend"
  tm set-option -t repl remain-on-exit on >/dev/null
  if timeout=30 poll at_prompt; then
    ok "the REPL started"
  else
    fail "the REPL did not show a prompt"
    exit 1
  fi
}
pane_dead() { [[ $(tm display-message -p -t repl '#{pane_dead}') == 1 ]]; }
# The exit status of the REPL that ended. tmux sees the terminal close before it reaps the
# process; on a loaded machine that can take seconds, while the exit code of the unreaped process
# is already in /proc (its last stat field, in waitpid's format).
exit_status() {
  local status pid
  status=$(tm display-message -p -t repl '#{pane_dead_status}')
  if [[ -n $status ]]; then
    echo "$status"
    return 0
  fi
  pid=$(tm display-message -p -t repl '#{pane_pid}')
  [[ -r /proc/$pid/stat ]] || return 1
  local stat
  stat=$(</proc/"$pid"/stat)
  stat=${stat##*) }
  [[ ${stat%% *} == Z ]] || return 1
  echo $((${stat##* } >> 8))
}
exit_status_known() { exit_status >/dev/null; }
end_session() { tm kill-session -t repl >/dev/null 2>&1; }

# Sends Ctrl-C while LINE runs and prints the milliseconds until REGEX shows.
interrupt_latency() {
  local line=$1 re=$2
  type_text "$line"
  key Enter
  poll screen_has "^> $(sed 's/[][().*^$+?{}|\\]/\\&/g' <<<"$line")$" || fail "'$line' not shown"
  sleep 0.5 # let it reach the wait
  if done_after "$line"; then
    fail "'$line' returned before Ctrl-C"
    return
  fi
  local t0 t1
  t0=$(now_ms)
  key C-c
  if timeout=10 poll screen_has "$re"; then
    t1=$(now_ms)
    echo "$((t1 - t0))"
  else
    fail "Ctrl-C during '$line' showed no /$re/"
  fi
  poll at_prompt || fail "no prompt after interrupting '$line'"
}
check_latency() {
  local what=$1 ms=$2
  if [[ -z $ms ]]; then
    fail "$what: no latency measured"
  elif ((ms < 1000)); then
    ok "Ctrl-C during $what returned in $ms ms"
  else
    fail "Ctrl-C during $what took $ms ms (limit 1000 ms)"
  fi
}

echo "== session 1: editing, results, errors, Ctrl-C in Lua code, history, Ctrl-D ($backend)"
start_repl
if screen_has "^culua [0-9.]+ \(Lua 5\.4\.[0-9]+\): backend $backend, device 0: .+"; then
  ok "banner: $(screen | grep -m1 '^culua')"
else
  fail "banner without version, backend and device"
fi

expect '1+1' '^2$'
run_line 'x = cu.arange(5)'
expect 'x:sum()' '^cu\.array\(10\., shape=\{\}, dtype=f32, device\)$'
expect '1, "two", 3.5' '^1[[:space:]]+two[[:space:]]+3\.5$'
expect 'x' 'cu\.array\(\[0\., 1\., 2\., 3\., 4\.\], shape=\{5\}'
expect 'print("héllo ✓", #"é")' '^héllo ✓[[:space:]]+2$'

# A long array prints a short summary.
expect 'cu.arange(100000)' '\.\.\..*shape=\{100000\}'
out=$(output_after 'cu.arange(100000)')
(($(wc -l <<<"$out") <= 3)) && ok "cu.arange(100000) printed $(wc -l <<<"$out") lines" ||
  fail "cu.arange(100000) printed $(wc -l <<<"$out") lines"
expect 'cu.zeros({1000, 1000})' 'shape=\{1000,1000\}'
out=$(output_after 'cu.zeros({1000, 1000})')
(($(wc -l <<<"$out") <= 8)) && ok "a 1000x1000 array printed $(wc -l <<<"$out") lines" ||
  fail "a 1000x1000 array printed $(wc -l <<<"$out") lines"

# Multi-line chunks continue with ">>".
type_text 'for i = 1, 3 do'
key Enter
poll at_continuation || fail "no '>>' after 'for i = 1, 3 do'"
type_text 'print("loop" .. i * 11)'
key Enter
poll at_continuation || fail "no '>>' inside the loop"
type_text 'end'
key Enter
timeout=10 poll screen_has '^loop33$' && poll at_prompt || fail "no prompt after the loop"
if [[ $(output_after 'end' '>>' | tr '\n' ' ') == "loop11 loop22 loop33 " ]]; then
  ok "multi-line for loop"
else
  fail "multi-line for loop printed [$(output_after 'end' '>>')]"
fi

# Errors keep the session.
expect 'x = = 1' "^$prog_re: stdin:1: unexpected symbol near '='\$"
expect 'print("after" .. "syntax")' '^aftersyntax$'
run_line 'y = 7'
expect 'error("boom")' "^$prog_re: stdin:1: boom.*stack traceback:"
expect 'y * 6' '^42$'
# A capture that fails ends cleanly: the session, its stream and later graphs keep working.
expect 'g = cu.graph(function() return x[1] end)' "^$prog_re: stdin:1: reading an element.*cannot be captured"
run_line 'g = cu.graph(function() cu.mul(x, 2, {out = x}) end); g:launch()'
expect 'x:sum()' '^cu\.array\(20\., shape=\{\}'

# Completion.
type_text 'cu.ze'
key Tab
if timeout=5 poll screen_has '^> cu\.zeros$'; then ok "cu.ze<TAB> completed cu.zeros"; else fail "cu.ze<TAB>"; fi
discard_line
type_text 'cu.'
key Tab
key Tab
# Past 100 names the line editor asks before listing them all (cu has more).
if timeout=3 poll screen_has 'Display all'; then key y; fi
if timeout=5 poll screen_has '(^|[[:space:]])zeros([[:space:]]|$)' &&
  screen_has '(^|[[:space:]])arange([[:space:]]|$)' && screen_has '(^|[[:space:]])sync([[:space:]]|$)'; then
  ok "cu.<TAB><TAB> listed the module"
else
  fail "cu.<TAB><TAB> listing"
fi
discard_line
run_line 'a = cu.zeros(4)'
type_text 'a:'
key Tab
key Tab
if timeout=3 poll screen_has 'Display all'; then key y; fi
if timeout=5 poll screen_has '(^|[[:space:]])reshape([[:space:]]|$)' &&
  screen_has '(^|[[:space:]])to_host([[:space:]]|$)' && screen_has '(^|[[:space:]])totable([[:space:]]|$)'; then
  ok "a:<TAB><TAB> listed array methods"
else
  fail "a:<TAB><TAB> listing"
fi
discard_line
type_text 'cu.ho'
key Tab
if timeout=5 poll screen_has '^> cu\.host\.$'; then ok "a table completes with '.'"; else fail "cu.ho<TAB>"; fi
discard_line
run_line 's = "text"'
type_text 's:up'
key Tab
if timeout=5 poll screen_has '^> s:upper$'; then ok "string methods complete"; else fail "s:up<TAB>"; fi
discard_line
run_line 'probe = setmetatable({}, {__index = function() called = true end})'
type_text 'probe.'
key Tab
key Tab
sleep 0.2
discard_line
expect 'called == nil' '^true$'

# Ctrl-C at the prompt discards the line.
type_text 'this line is discarded'
poll screen_has '^> this line is discarded$' || fail "typed text not shown"
key C-c
if poll at_prompt && screen_has '^> this line is discarded\^C$'; then ok "Ctrl-C at the prompt"; else fail "Ctrl-C at the prompt"; fi
expect 'print("fresh" .. "prompt")' '^freshprompt$'
if screen_has "near 'line'"; then fail "the discarded line ran"; fi

# Ctrl-C in running Lua code.
ms=$(interrupt_latency 'while true do end' "$prog_re: interrupted!")
check_latency "while true do end" "$ms"
expect 'y' '^7$'

# Ctrl-D exits with status 0 and writes the history.
key C-d
if timeout=20 poll pane_dead && poll exit_status_known; then
  status=$(exit_status)
  [[ $status == 0 ]] && ok "Ctrl-D exits with status 0" || fail "Ctrl-D: exit status '$status'"
else
  fail "Ctrl-D did not exit (pane_dead=$(tm display-message -p -t repl '#{pane_dead}'), status '$(tm display-message -p -t repl '#{pane_dead_status}')', pid $(tm display-message -p -t repl '#{pane_pid}'): $(ps -o stat=,wchan=,cmd= -p "$(tm display-message -p -t repl '#{pane_pid}')" 2>&1))"
fi
history="$work/home/.culua_history"
if [[ -f $history ]] && grep -qF 'error("boom")' "$history" && grep -qF '1+1' "$history"; then
  ok "history written to \$HOME/.culua_history ($(wc -l <"$history") lines)"
else
  fail "history file"
fi
end_session

echo "== session 2: Ctrl-C during long waits for the device ($backend)"
start_repl
# x:sum() once first: CUDA loads a kernel's module on its first launch (lazy loading), and that
# load waits for kernels already running, here the other stream's sleep.
run_line 'x = cu.arange(10); h = x:to_host(); s2 = cu.stream(); x:sum()'
ms1=$(interrupt_latency 'cu.sleep(30000, {stream = s2}); cu.sync()' 'interrupted \(queued device work continues\)')
check_latency "cu.sync() behind another stream's sleep" "$ms1"
expect 'x:sum()' '^cu\.array\(45\., shape=\{\}, dtype=f32, device\)$'
ms2=$(interrupt_latency 'cu.sleep(30000); cu.sync()' 'interrupted \(queued device work continues\)')
check_latency "cu.sync() behind the default stream's sleep" "$ms2"
ms3=$(interrupt_latency 'x[4]' 'interrupted \(queued device work continues\)')
check_latency "an element read behind the sleep" "$ms3"
ms4=$(interrupt_latency 'print(x)' 'interrupted \(queued device work continues\)')
check_latency "printing an array (a copy to the host) behind the sleep" "$ms4"
expect 'h[4], #x' '^3\.0[[:space:]]+10$'
# Leaving waits for the queued sleep and says so; a second Ctrl-C quits at once.
key C-d
if timeout=10 poll screen_has 'waiting for queued device work to finish'; then
  ok "Ctrl-D with queued work says it waits"
else
  fail "no note about queued work at exit"
fi
key C-c
timeout=10 poll pane_dead && ok "Ctrl-C while waiting at exit quits" || fail "Ctrl-C at exit"
end_session

echo "Ctrl-C latency ($backend): while-loop ${ms:-?} ms; waits ${ms1:-?}, ${ms2:-?}, ${ms3:-?}, ${ms4:-?} ms"
if ((failures)); then
  echo "$failures check(s) FAILED"
  exit 1
fi
echo "all REPL checks passed"
