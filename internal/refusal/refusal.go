// Package refusal is the error of an operator action that refuses: a message written for a
// person, naming the object, and a kind that code branches on with errors.Is.
package refusal

import "fmt"

type refusal struct {
	kind error
	msg  string
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }

// New is a refusal of kind whose text is the formatted message alone.
func New(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}
