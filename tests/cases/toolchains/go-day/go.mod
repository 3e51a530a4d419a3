module example.com/day

go 1.22
