module github.com/f0b5b96b/resilience/bench

go 1.25

replace github.com/f0b5b96b/resilience => ../

require github.com/failsafe-go/failsafe-go v0.9.8 // indirect
