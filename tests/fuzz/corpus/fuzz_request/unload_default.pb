Â	
default