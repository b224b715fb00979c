package todo_test

// ExampleSearch is in the external test package.
func ExampleSearch() {}
