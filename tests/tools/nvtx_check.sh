#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# NVTX ranges named after porta's kernels and regions, seen through nvtx_record.so in place of
# Nsight Systems: runs the heat example under it and checks the ranges it recorded.
#   nvtx_check.sh <nvtx_record.so> <record file> <heat> [args...]
lib=$1 rec=$2
shift 2
rm -f "$rec"
NVTX_INJECTION64_PATH=$lib PORTA_NVTX_RECORD=$rec "$@" || exit 1
if [ ! -f "$rec" ]; then
  echo "no NVTX call was made: no CUDA device here"
  exit 77
fi
for name in "jacobi sweep" "total heat" "largest change" "time steps"; do
  if ! grep -qx "push $name" "$rec"; then
    echo "no range named '$name' in $rec:"
    sort "$rec" | uniq -c
    exit 1
  fi
done
pushes=$(grep -c '^push ' "$rec")
pops=$(grep -c '^pop$' "$rec")
if [ "$pushes" != "$pops" ]; then
  echo "$pushes ranges pushed, $pops popped"
  exit 1
fi
echo "$pushes NVTX ranges, each closed:"
sort "$rec" | uniq -c
