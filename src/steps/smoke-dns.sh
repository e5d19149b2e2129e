# The smoke test's name checks, run by sh inside a pod on one worker (busybox or a Debian-based
# image: getent where there is one, else nslookup; wget, else curl). Arguments: the API Service's
# name, the smoke Service's full name, its short name. Prints one line per check for the jumpbox
# to judge: api=ADDRESS, svc=ADDRESS (empty when the name did not resolve), http=ok|fail.
resolve() {
  if command -v getent >/dev/null 2>&1; then
    getent hosts "$1" | sed 's/[[:space:]].*//' | head -n 1
  else
    nslookup "$1" 2>/dev/null | sed -n '/^Name:/,$ s/^Address:*[[:space:]]*//p' | head -n 1
  fi
}
fetch() {
  if command -v wget >/dev/null 2>&1; then wget -q -T 3 -O /dev/null "$1"; else curl -fsS -m 3 -o /dev/null "$1"; fi
}
echo "api=$(resolve "$1")"
echo "svc=$(resolve "$2")"
# By the short name, as pods call Services: the pod's search list makes it the full name.
i=0
while [ "$i" -lt 10 ]; do
  if fetch "http://$3/"; then echo "http=ok"; exit 0; fi
  i=$((i + 1))
  sleep 1
done
echo "http=fail"
