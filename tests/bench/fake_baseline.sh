#!/bin/sh
# A stand-in for culua-baseline (test bench.suite_launch_rounds): the native launch records of
# `culua-baseline suite --ops launch`, whose medians change from one invocation (round) to the
# next, 2, 3, 4, ... µs, as the machine's drift would. The count is kept beside the script.
count_file="$(dirname "$0")/calls"
n=$(cat "$count_file" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$count_file"
for k in 0 4 8; do
  for kind in launch enqueue; do
    printf '{"impl":"native","op":"%s_rtc%d","unit":"us","median":%d,"min":1,"max":99,"n":3}\n' \
      "$kind" "$k" $((n + 1))
  done
done
