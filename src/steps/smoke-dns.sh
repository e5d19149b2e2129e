# The smoke test's name checks, run by sh inside a pod on one worker (busybox or a Debian-based
# image: getent where there is one, else nslookup; curl, else nc, whose connect resolves the name
# through the pod's resolver and search list; busybox-static's wget crashes in a pod).
# Arguments: the API Service's name and address, the smoke Service's full name and address, its
# short name. The smoke test makes its Service anew on every run, and CoreDNS may still answer the
# last one's address from its cache (30 s): the names are asked again for up to 45 s until both
# answers are right. Prints one line per check for the jumpbox to judge: api=ADDRESS,
# svc=ADDRESS (empty when the name did not resolve), http=ok|fail.
resolve() {
  if command -v getent >/dev/null 2>&1; then
    getent hosts "$1" | sed 's/[[:space:]].*//' | head -n 1
  else
    nslookup "$1" 2>/dev/null | sed -n '/^Name:/,$ s/^Address:*[[:space:]]*//p' | head -n 1
  fi
}
fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS -m 3 -o /dev/null "http://$1/"
  else
    printf 'GET / HTTP/1.0\r\nHost: %s\r\n\r\n' "$1" | nc -w 3 "$1" 80 | head -n 1 | grep -q '^HTTP/1\.[01] 2'
  fi
}
i=0
while :; do
  api=$(resolve "$1")
  svc=$(resolve "$3")
  if [ "$api" = "$2" ] && [ "$svc" = "$4" ]; then break; fi
  i=$((i + 1))
  [ "$i" -lt 45 ] || break
  sleep 1
done
echo "api=$api"
echo "svc=$svc"
# By the short name, as pods call Services: the pod's search list makes it the full name.
i=0
while [ "$i" -lt 10 ]; do
  if fetch "$5"; then echo "http=ok"; exit 0; fi
  i=$((i + 1))
  sleep 1
done
echo "http=fail"
