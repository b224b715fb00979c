package todo

// testHelper is in a _test.go file of the package.
func testHelper(t int) {}
