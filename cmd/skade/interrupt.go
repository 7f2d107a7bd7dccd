package main

import (
	"context"
	"sync"
)

// interrupts routes Ctrl-C (SIGINT). By default it cancels the whole
// command; the shell redirects it to the statement that is running, so
// that Ctrl-C stops a query and not the shell. While the shell waits for
// input the terminal is in raw mode and Ctrl-C reaches the line editor,
// not this router.
var interrupts = &interruptRouter{}

type interruptRouter struct {
	mu      sync.Mutex
	handler func()
}

// route makes f the handler and returns a function restoring the previous one.
func (r *interruptRouter) route(f func()) (restore func()) {
	r.mu.Lock()
	prev := r.handler
	r.handler = f
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.handler = prev
		r.mu.Unlock()
	}
}

// interrupt runs the current handler; it reports false when there is none.
func (r *interruptRouter) interrupt() bool {
	r.mu.Lock()
	h := r.handler
	r.mu.Unlock()
	if h == nil {
		return false
	}
	h()
	return true
}

// statementContext derives a context for one statement that Ctrl-C cancels.
func statementContext(ctx context.Context) (context.Context, func()) {
	sctx, cancel := context.WithCancelCause(ctx)
	restore := interrupts.route(func() { cancel(errInterrupted) })
	return sctx, func() {
		restore()
		cancel(nil)
	}
}
