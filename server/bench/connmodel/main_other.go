//go:build !linux

// Command connmodel needs epoll; see main_linux.go.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "connmodel: linux only (it compares Go's net package with an epoll loop)")
	os.Exit(1)
}
