package parser_test

import (
	"errors"
	"fmt"

	"github.com/skadedb/skade/parser"
)

func ExampleParseOne() {
	stmt, err := parser.ParseOne(`merge into skade.main.events e using incoming i on e.id = i.id
		when matched and i.deleted then delete
		when not matched then insert values (i.id, i.status)`)
	if err != nil {
		panic(err)
	}
	m := stmt.(*parser.Merge)
	fmt.Println(len(m.Target), m.Target.Last().Name, m.TargetAlias.Name)
	for _, c := range m.Clauses {
		fmt.Printf("%s %T\n", c.Kind, c.Action)
	}
	fmt.Println(stmt)
	// Output:
	// 3 events e
	// MATCHED *parser.MergeDelete
	// NOT MATCHED *parser.MergeInsert
	// MERGE INTO skade.main.events AS e USING incoming AS i ON e.id = i.id WHEN MATCHED AND i.deleted THEN DELETE WHEN NOT MATCHED THEN INSERT VALUES (i.id, i.status)
}

func ExampleError_Caret() {
	_, err := parser.Parse("SELECT id\nFROM events\nWEHRE id = 1")
	var pe *parser.Error
	if errors.As(err, &pe) {
		fmt.Println(pe)
		fmt.Println(pe.Caret())
	}
	// Output:
	// syntax error at line 3, column 1 near "WEHRE": expected one of ",", WHERE, GROUP BY, HAVING, UNION, ORDER BY, LIMIT, ";"; did you mean WHERE?
	// WEHRE id = 1
	// ^
}

func ExampleSplit() {
	for _, s := range parser.Split("BEGIN; -- start\nINSERT INTO t VALUES ('a;b'); COMMIT") {
		fmt.Printf("%d:%d %s\n", s.Pos.Line, s.Pos.Column, s.Text)
	}
	fmt.Println(parser.Incomplete("SELECT 'unterminated"), parser.Incomplete("SELECT 1;"))
	// Output:
	// 1:1 BEGIN
	// 2:1 INSERT INTO t VALUES ('a;b')
	// 2:31 COMMIT
	// true false
}
