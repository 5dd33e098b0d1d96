
Ò
tinyF