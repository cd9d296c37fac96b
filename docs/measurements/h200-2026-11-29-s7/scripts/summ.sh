#!/bin/bash
# Compact view of sparseditto eval outputs: file, then one line a candidate: name verdict regs ms-per-n.
for f in "$@"; do echo "## $(basename $f .txt)"; awk '
  /^candidate /{ if (name) print line; split($2,a,"-"); name=a[1]; line=sprintf("  %-12s", name) }
  /verdict:/{ v=$2; line=line " " v }
  /registers/{ if (!r) { r=1; for(i=1;i<=NF;i++) if ($(i+1)=="registers,") line=line " r" $i } }
  /^candidate /{ r=0 }
  /^ +[0-9]+ +[0-9.]+ /{ line=line sprintf(" n%s:%s", $1, $2); for(i=1;i<=NF;i++) if ($i ~ /^cublas/) line=line "(d" $(i+1) ")" }
  /Error|error:|detail:|mismatch/{ line=line " | " substr($0,1,160) }
  END{ if (name) print line }' $f; done
