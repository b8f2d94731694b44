// Package secretfile reads a secret (a password) from a file, such as a mounted Kubernetes
// Secret, so that it never stands on a command line.
package secretfile

import (
	"fmt"
	"os"
	"strings"
)

// Read returns the file's content without its trailing newline (editors and `kubectl create
// secret --from-file` leave one). An empty secret is an error: it is a mistake, never a password.
func Read(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
}
