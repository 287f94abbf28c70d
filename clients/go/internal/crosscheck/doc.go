// Package crosscheck holds the test that sends every recorded conformance case, converted by
// the Go client and by the Python client, to one `schedsvc serve` and compares the answers.
package crosscheck
