 Ê

tiny