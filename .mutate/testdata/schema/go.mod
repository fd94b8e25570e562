module example.com/schema

go 1.26.0
