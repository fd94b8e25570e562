module github.com/f0b5b96b/resilience/resiliencegrpc

go 1.26.0

replace github.com/f0b5b96b/resilience => ../

require (
	github.com/f0b5b96b/resilience v0.1.0
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/google/go-cmp v0.7.0
	go.uber.org/goleak v1.3.0
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)
