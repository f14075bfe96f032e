//go:build ignore

// The pod sandbox's process for the cluster scripts/k8s-test.sh starts (the
// "pause" container that holds a pod's namespaces), built there with
// `go build` into a one-file image imported into containerd, so that no
// registry is needed. It waits for a signal: SIGINT or SIGTERM ends it with
// status 0; as the PID 1 of its namespace it reaps any child handed to it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
