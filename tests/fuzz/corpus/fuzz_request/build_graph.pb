б
tinyмлл>
вё=2turn@H