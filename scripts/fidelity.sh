#!/usr/bin/env bash
# Measures the emulator's fidelity with independent tools (ping, iperf3) through
# `spdylab shell`, as issue 3 asks. Prints one line per measurement. Needs root.
set -u
S=${SPDYLAB:-target/release/spdylab}
echo "# RTT: ping -c 50 -i 0.2 through an unshaped link"
for rtt in 10ms 150ms 490ms; do
  echo "rtt $rtt: $($S shell --rtt $rtt -- ping -c 50 -i 0.2 -q server | tail -1)"
done
echo "# Rate: iperf3 TCP, 10 s, receiver's goodput (up = client sends, down = -R)"
for rate in 64kbit 1mbit 8mbit 100mbit; do
  for dir in up down; do
    flag=""; [ $dir = down ] && flag="-R"
    bps=$($S shell --rate $rate --rtt 20ms --server-cmd 'iperf3 -s -1 >/dev/null' -- \
      iperf3 -c server -t 10 -J $flag | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])')
    echo "rate $rate $dir: $bps bit/s"
  done
done
echo "# Loss: iperf3 UDP, 12000 datagrams of 100 bytes each way over 12 s"
for loss in 1% 3%; do
  for dir in up down; do
    flag=""; [ $dir = down ] && flag="-R"
    $S shell --loss $loss --rtt 20ms --server-cmd 'iperf3 -s -1 >/dev/null' -- \
      iperf3 -c server -u -b 800k -l 100 -t 12 -J $flag | python3 -c "
import json,sys; e=json.load(sys.stdin)['end']['sum']
print('loss $loss $dir: lost', e['lost_packets'], 'of', e['packets'], '=', round(100*e['lost_packets']/e['packets'],3), '%')"
  done
done
echo "# Queue: 256p at 1mbit, bulk CUBIC download for 20 s; ping idle, then under load"
stats=$(mktemp)
$S shell --rate 1mbit --rtt 20ms --queue 256p --stats $stats --server-cmd 'iperf3 -s -1 >/dev/null' -- sh -c \
  'ping -c 5 -i 0.2 -q server | tail -1; iperf3 -c server -R -t 20 >/dev/null & sleep 12; ping -c 10 -i 0.5 -q server | tail -1; wait'
python3 -c "import json; d=json.load(open('$stats'))['link']['down']; print('queue down: max', d['max_queue_packets'], 'packets; drops', d['drops_queue'], '; mean queueing delay', round(d['queueing_delay_total_ns']/max(d['packets_served'],1)/1e6,1), 'ms')"
rm -f $stats
echo "# Capacity: unshaped iperf3 for 10 s; emulator CPU from calibrate at 100mbit"
echo "unshaped: $($S shell --server-cmd 'iperf3 -s -1 >/dev/null' -- iperf3 -c server -t 10 -J | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9,2), "Gbit/s")')"
$S calibrate --rate 100mbit --rtt 10ms --echo-samples 20 --datagrams 2000 | grep -E "^(down|up) "
