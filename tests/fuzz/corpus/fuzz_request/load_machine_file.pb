¢	
missing