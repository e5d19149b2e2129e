# Stops every pod and container on a worker, for `hardway reset`, while containerd still runs and
# after the kubelet stopped (so nothing starts them again). Pods run under kubepods.slice (the
# systemd cgroup driver): stopping the slice ends their processes. Then every task containerd knows,
# in every namespace, is killed and deleted (its shim exits and its root filesystem is unmounted)
# and every container record deleted. Prints what it stopped; exits 1 if containerd refuses.
# A task or container may go between its listing and its delete (containerd's CRI plugin deletes
# the task of a container that exited by itself, "no running task found"): gone is what was wanted,
# so a failed delete is tried once more, with its error shown, only while containerd still lists it.
gone() { ! ctr -n "$1" "$2" ls -q | grep -qxF "$3"; }
systemctl stop kubepods.slice 2>/dev/null
for ns in $(ctr namespaces ls -q); do
  for task in $(ctr -n "$ns" tasks ls -q); do
    ctr -n "$ns" tasks kill -a -s SIGKILL "$task" 2>/dev/null
    ctr -n "$ns" tasks rm -f "$task" >/dev/null 2>&1 || gone "$ns" tasks "$task" || ctr -n "$ns" tasks rm -f "$task" >/dev/null || exit 1
    echo "stopped task $ns/$task"
  done
  for c in $(ctr -n "$ns" containers ls -q); do
    ctr -n "$ns" containers rm "$c" >/dev/null 2>&1 || gone "$ns" containers "$c" || ctr -n "$ns" containers rm "$c" >/dev/null || exit 1
  done
done
# A pod's slice and a container's scope that ended killed stay loaded as failed transient units
# (in systemctl list-unit-files) until told to go.
systemctl reset-failed 'kubepods*' 'cri-containerd-*' 2>/dev/null
exit 0
