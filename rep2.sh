bin=$1; fails=0
for i in $(seq 1 40); do
  rm -rf /tmp/symt/s2
  SANDBOX_IMAGE_STORE=/tmp/symt/s2 $bin image import --name sym /tmp/symt/lay >/dev/null 2>/tmp/symt/err2 || { fails=$((fails+1)); tail -1 /tmp/symt/err2; }
done
echo "$bin fails $fails/40"
