package main

import (
	"fmt"
	"io"
)

func runSequence(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "kube-oracle sequence: not implemented yet")
	return 1
}
