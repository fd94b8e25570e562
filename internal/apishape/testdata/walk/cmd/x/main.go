// Command x is a program: the checker skips it.
package main

type Stats struct{ Rejected uint64 }

func main() {}
