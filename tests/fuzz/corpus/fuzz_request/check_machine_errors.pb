ªR
badBa { clip walk GO x }
b { clip run }
machine m { d { machine m } }
default