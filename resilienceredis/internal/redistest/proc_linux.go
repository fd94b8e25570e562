package redistest

import "syscall"

// procAttr makes the server die with the process that started it, so that
// a program killed before its cleanup (a pipe closed under it) leaves no
// server behind.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
