# bench/bench-machine.sh - the machine line every bench script prints first
# (sourced, not run): these machines are shared and noisy, so each figure says
# where it came from and how much of the CPU the hypervisor took meanwhile.
#
# bench_machine_header: "machine: HOST, N CPUs, MODEL, kernel K" and the steal
# share of CPU time over one second (/proc/stat), the load average.
bench_machine_header() {
  local s1 s2
  s1=$(awk '/^cpu /{ t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t }' /proc/stat)
  sleep 1
  s2=$(awk '/^cpu /{ t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t }' /proc/stat)
  echo "machine: $(hostname), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), kernel $(uname -r)"
  echo "$s1 $s2" | awk -v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v now="$(date -u '+%Y-%m-%d %H:%M UTC')" \
    '{ d = $4 - $2; printf "now: %s, steal %.1f%% of CPU time over 1 s, load average %s\n", now, d ? 100 * ($3 - $1) / d : 0, load }'
}
